// Package setting is how each package checks its own section of
// llmrelay's configuration. A section's type lives in the package that
// uses it (retry.Config, auth.Config, ...), with its defaults and a Check
// that reports problems by the setting's path within the section;
// internal/config composes the sections, places each problem (the
// section's prefix, the file's line) and holds no rule of its own about a
// section.
package setting

import (
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
