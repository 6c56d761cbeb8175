// Package setting is how each package checks its own section of
// llmrelay's configuration. A section's type lives in the package that
// uses it (retry.Config, auth.Config, ...), with its defaults and a Check
// that reports problems by the setting's path within the section;
// internal/config composes the sections, places each problem (the
// section's prefix, the file's line) and holds no rule of its own about a
// section.
package setting

import (
	"fmt"
	"strings"
	"time"
)

// Problems receives the problems a section's Check finds.
type Problems interface {
	// Bad reports a problem with the setting at path.
	Bad(path, format string, args ...any)
	// Between reports a problem between two settings, on the first; the
	// second gives the line when only it was set in the file.
	Between(path, other, format string, args ...any)
}

// Checker is a section that needs nothing but itself to be checked.
// internal/config checks every section of its Config that is a Checker,
// with the section's path as prefix: a new section is checked by being
// composed, with no other wiring. A section whose rules depend on other
// sections has a Check that takes them, which config calls by hand.
type Checker interface {
	Check(p Problems)
}

// Under returns p for the section at prefix ("retry."): the paths its
// Check reports are relative to the section. (The list sections,
// providers and routes, write their paths from the root, index
// included, and name the other sections' settings they depend on.)
func Under(p Problems, prefix string) Problems { return under{p, prefix} }

type under struct {
	p      Problems
	prefix string
}

func (u under) Bad(path, format string, args ...any) { u.p.Bad(u.prefix+path, format, args...) }

func (u under) Between(path, other, format string, args ...any) {
	u.p.Between(u.prefix+path, u.prefix+other, format, args...)
}

// Problem is one problem with one setting. Path is the setting's path
// from the configuration's root ("providers[1].base_url"); Other, when
// not "", is a second setting the problem involves, which gives the line
// when Path was not set in the file.
type Problem struct {
	Path, Other, Message string
	// Err is the error the problem was found as, if any (List.Add): the
	// list unwraps to it, for errors.Is and errors.As.
	Err error
}

// List collects the problems that code building something from its
// settings finds, which no Check could see (a provider's adapter, a
// route's targets): it implements Problems, and, when not empty, error.
// internal/config places each problem on its line (Config.Locate).
type List []Problem

// Bad implements Problems.
func (l *List) Bad(path, format string, args ...any) { l.Between(path, "", format, args...) }

// Between implements Problems.
func (l *List) Between(path, other, format string, args ...any) {
	*l = append(*l, Problem{Path: path, Other: other, Message: fmt.Sprintf(format, args...)})
}

// Add reports err as a problem with the setting at path.
func (l *List) Add(path string, err error) {
	*l = append(*l, Problem{Path: path, Message: err.Error(), Err: err})
}

// Unwrap returns the errors the problems were found as.
func (l List) Unwrap() []error {
	var errs []error
	for _, p := range l {
		if p.Err != nil {
			errs = append(errs, p.Err)
		}
	}
	return errs
}

// Err returns l as an error, or nil when it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Error implements error: one "path: message" a line.
func (l List) Error() string {
	lines := make([]string, len(l))
	for i, p := range l {
		lines[i] = p.Path + ": " + p.Message
	}
	return strings.Join(lines, "\n")
}

// NotOneOf describes value, which is not one of choices (a closed set: a
// provider kind, a balance, a policy), naming the choices and suggesting
// the one value was likely meant to be (Closest):
//
//	"opnai" is not anthropic, gemini, mock or openai; did you mean openai?
func NotOneOf(value string, choices ...string) string {
	var list string
	switch n := len(choices); n {
	case 0:
		list = "known"
	case 1:
		list = choices[0]
	default:
		list = strings.Join(choices[:n-1], ", ") + " or " + choices[n-1]
	}
	msg := fmt.Sprintf("%q is not %s", value, list)
	if c := Closest(value, choices); c != "" {
		msg += "; did you mean " + c + "?"
	}
	return msg
}

// Closest returns the candidate that word was most likely meant to be, or
// "": the same once case, "-" and "_" are ignored, or else at most a
// third of its letters apart (one letter for short words), a swap of two
// neighbours counting as one.
func Closest(word string, candidates []string) string {
	w := Squash(word)
	best, bestDist := "", max(1, len(w)/3)+1
	for _, c := range candidates {
		if d := distance(w, Squash(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Squash lower-cases s and drops "_" and "-": metricsListen,
// metrics-listen and metrics_listen are the same.
func Squash(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// distance is the edit distance between a and b, in bytes: insertions,
// deletions, substitutions and swaps of neighbours (optimal string
// alignment).
func distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Duration writes d as a Go duration without zero trailing units, as a
// config file would: "2m" rather than "2m0s", "1h" rather than "1h0m0s".
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
