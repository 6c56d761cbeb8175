package provider

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NamePattern is the rule for a provider's configured name, which is the
// provider part of a request's "<provider>/<model>": a lower-case letter
// or digit, then up to 62 lower-case letters, digits, '_' or '-'. The
// proto's validation rule on GenerateRequest.model spells the same rule
// (TestNamePatternMatchesTheProto holds the two together), so every name
// the config accepts can be called.
const NamePattern = `^[a-z0-9][a-z0-9_-]{0,62}$`

var nameRE = regexp.MustCompile(NamePattern)

// CheckName returns an error saying why name cannot be a provider's name,
// or nil when it can.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("required")
	}
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q cannot be called: a provider name is what requests write before the '/' in \"<provider>/<model>\", "+
			"1 to 63 lower-case letters, digits, '_' or '-', starting with a letter or digit (for example %q)", name, suggestName(name))
	}
	return nil
}

// suggestName returns a name close to name that follows NamePattern.
func suggestName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case b.Len() > 0:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-_")
	if len(s) > 63 {
		s = s[:63]
	}
	if s == "" {
		return "openai"
	}
	return s
}

// SplitModel splits a request's "<provider>/<model>" at the first "/". ok
// is false when there is no "/" or either part is empty. It is the one
// place the split is made: Set.Resolve routes by it and key model patterns
// are matched against its parts.
func SplitModel(s string) (providerName, model string, ok bool) {
	providerName, model, ok = strings.Cut(s, "/")
	return providerName, model, ok && providerName != "" && model != ""
}

// CheckModelPath returns an error when a model name, split at "/", has an
// empty, "." or ".." segment: such a name could step out of the path an
// adapter builds from it. Requests are refused such names by the proto's
// validation rule on GenerateRequest.model; adapters that put the model
// into a URL check again, so that no caller can reach another path.
func CheckModelPath(model string) error {
	for seg := range strings.SplitSeq(model, "/") {
		switch seg {
		case "":
			return fmt.Errorf("model %q has an empty path segment", model)
		case ".", "..":
			return fmt.Errorf("model %q has a %q path segment", model, seg)
		}
	}
	return nil
}

// MaxMessageLen bounds a provider's error message as llmrelay keeps and
// quotes it; MaxTypeLen bounds its error type and code.
const (
	MaxMessageLen = 512
	MaxTypeLen    = 64
)

// CleanText returns s fit to quote to a client: control characters
// (newlines and tabs included), other spaces and invalid UTF-8 become one
// space between words, invisible format characters (such as bidirectional
// overrides) are dropped, the ends are trimmed, and the text is cut on a
// character boundary after at most max bytes, ending in "…" when cut.
func CleanText(s string, max int) string {
	var b strings.Builder
	b.Grow(min(len(s), max) + len("…"))
	space := false
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"),
			unicode.IsControl(r), unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.Is(unicode.Cf, r):
			continue
		}
		n := utf8.RuneLen(r)
		if space {
			n++
		}
		if b.Len()+n > max {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
