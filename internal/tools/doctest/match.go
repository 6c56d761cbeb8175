package main

import (
	"fmt"
	"regexp"
	"strings"
)

// wildcard in an expected output stands for any run of characters: within
// one line in text mode (a line holding only the wildcard stands for one or
// more whole lines), anywhere in json mode.
const wildcard = "…"

// matches reports whether actual is the expected output.
//
// Text mode compares line by line, ignoring trailing spaces and blank lines
// at the start and the end. JSON mode (for grpcurl's output, which prints
// each message over several lines) first removes every space, tab and line
// break outside string literals from both, so the documentation may lay
// each message out on one line, or wrap it where it likes.
func matches(expected, actual string, jsonMode bool) bool {
	if jsonMode {
		return wildcardMatch(stripJSONSpace(expected), stripJSONSpace(actual), `(?s:.*?)`)
	}
	// Line by line, each with its line break; a line holding only the
	// wildcard stands for one or more lines.
	var pattern strings.Builder
	for _, l := range strings.Split(normalizeText(expected), "\n") {
		if l == wildcard {
			pattern.WriteString(`(?:[^\n]*\n)+?`)
			continue
		}
		pattern.WriteString(wildcardPattern(l, `[^\n]*?`) + `\n`)
	}
	return regexpMatch(pattern.String(), normalizeText(actual)+"\n")
}

func wildcardMatch(pattern, s, any string) bool {
	return regexpMatch(wildcardPattern(pattern, any), s)
}

// wildcardPattern is a regular expression matching pattern literally, with
// any in place of each wildcard.
func wildcardPattern(pattern, any string) string {
	parts := strings.Split(pattern, wildcard)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, any)
}

func regexpMatch(pattern, s string) bool {
	re, err := regexp.Compile(`^` + pattern + `$`)
	if err != nil {
		return false
	}
	return re.MatchString(s)
}

// normalizeText trims the spaces at the end of each line and the blank
// lines at the start and the end.
func normalizeText(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// stripJSONSpace removes the whitespace outside JSON string literals.
func stripJSONSpace(s string) string {
	var b strings.Builder
	inString, escaped := false, false
	for _, r := range s {
		switch {
		case inString:
			b.WriteRune(r)
			if escaped {
				escaped = false
			} else if r == '\\' {
				escaped = true
			} else if r == '"' {
				inString = false
			}
		case r == '"':
			inString = true
			b.WriteRune(r)
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// firstDifference shows where actual stops following expected: the text of
// each from there, for the failure message. Past a wildcard it gives up.
func firstDifference(expected, actual string, jsonMode bool) string {
	if jsonMode {
		expected, actual = stripJSONSpace(expected), stripJSONSpace(actual)
	} else {
		expected, actual = normalizeText(expected), normalizeText(actual)
	}
	e, a := []rune(expected), []rune(actual)
	i := 0
	for i < len(e) && i < len(a) && e[i] == a[i] {
		i++
	}
	if i < len(e) && string(e[i]) == wildcard {
		return "the output matches up to a wildcard; the difference is after it"
	}
	snippet := func(r []rune) string {
		start := max(0, i-40)
		end := min(len(r), i+60)
		return string(r[start:end])
	}
	return fmt.Sprintf("first difference at character %d:\n       shown: …%s\n     printed: …%s", i, snippet(e), snippet(a))
}
