package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile("(?m)^#{1,6} +(.+?) *#*$")
)

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, punctuation but - and _ dropped, spaces as -, and -1,
// -2... after repeats. Headings inside code blocks are skipped.
func anchors(text string) map[string]bool {
	var outside strings.Builder
	fence := ""
	for _, l := range strings.Split(text, "\n") {
		if f, _, ok := openingFence(l); ok && (fence == "" || strings.HasPrefix(strings.TrimSpace(l), fence)) {
			if fence == "" {
				fence = f
			} else {
				fence = ""
			}
			continue
		}
		if fence == "" {
			outside.WriteString(l + "\n")
		}
	}
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(outside.String(), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// docPages returns the pages of docs/ under the repository root, then the
// named files of the repository (paths from its root).
func docPages(t *testing.T, root string, more ...string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		pages = append(pages, filepath.Join(root, filepath.FromSlash(m)))
	}
	return pages
}

// TestDocLinks: every relative link of the README and docs/ names a file
// that exists, and every #anchor a heading of the page it points to, so
// moving a section cannot leave a dead link behind.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	for _, page := range docPages(t, root, "README.md", "CONTRIBUTING.md", "CHANGELOG.md") {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(link, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link %s: no file %s", rel, link, file)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			text, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(text))[anchor] {
				t.Errorf("%s: link %s: no heading with anchor #%s", rel, link, anchor)
			}
		}
	}
}
