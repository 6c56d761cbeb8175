package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FieldError is one problem with one setting, written for the person who
// edits the config file: which setting (as a YAML path), where it was set,
// and what is wrong, without Go type names.
type FieldError struct {
	// Path names the setting as the file writes it: "listen",
	// "retry.initial_backoff", "providers[1].kind". It is "" for a problem
	// with the file as a whole (YAML that does not parse).
	Path string
	// Problem says what is wrong, e.g. `unknown field; did you mean listen?`.
	Problem string
	// File and Line locate the value in the config file. Line is 0 when the
	// value did not come from the file.
	File string
	Line int
	// Source says where a value that did not come from the file was set:
	// "the command line", "$LLMRELAY_LISTEN"; "" for the file or a default.
	Source string

	// related are other settings the problem involves: when Path was not
	// set in the file, the first of them that was gives the line.
	related []string
	// meant is, for an unknown field, the setting it was likely meant to
	// be ("did you mean"), whose own problems follow from it.
	meant string
}

// Error implements error: "llmrelay.yaml:3: retry.max_backoff: ...",
// "listen (from the command line): ..." or "retry.max_backoff: ...".
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ": ")
	} else if e.File != "" && e.Path == "" {
		b.WriteString(e.File + ": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		if e.Source != "" && e.Line == 0 {
			b.WriteString(" (from " + e.Source + ")")
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Problems is every problem found in a configuration, in file order. Load
// and Parse return it (as an error) when there is at least one; find one
// problem with errors.As(err, new(*FieldError)).
type Problems []*FieldError

// Error implements error: the one problem, or a count followed by one
// problem per line.
func (p Problems) Error() string {
	if len(p) == 1 {
		return p[0].Error()
	}
	var b strings.Builder
	where := "the configuration"
	if f := p.file(); f != "" {
		where = f
	}
	fmt.Fprintf(&b, "%s has %d problems:", where, len(p))
	for _, e := range p {
		b.WriteString("\n  " + e.Error())
	}
	return b.String()
}

// Unwrap returns the problems, for errors.As and errors.Is.
func (p Problems) Unwrap() []error {
	errs := make([]error, len(p))
	for i, e := range p {
		errs[i] = e
	}
	return errs
}

// file returns the config file the problems name, if any does.
func (p Problems) file() string {
	for _, e := range p {
		if e.File != "" {
			return e.File
		}
	}
	return ""
}

// err returns p as an error, sorted by line (problems without a line last,
// in the order found), or nil when p is empty.
func (p Problems) err() error {
	if len(p) == 0 {
		return nil
	}
	p.sort()
	return p
}

// sort puts p in file order: by line, those without a line last, in the
// order found.
func (p Problems) sort() {
	slices.SortStableFunc(p, func(a, b *FieldError) int {
		if (a.Line == 0) != (b.Line == 0) {
			return cmp.Compare(b.Line, a.Line) // the one with a line first
		}
		return cmp.Compare(a.Line, b.Line)
	})
}

// cover reports whether e, a problem Validate found, follows from one of
// p, the file's problems of shape, whose settings were left out: e's
// setting, or one it involves, is one of theirs, inside one or holds one,
// or is the setting an unknown field was likely meant to be.
func (p Problems) cover(e *FieldError) bool {
	for _, shape := range p {
		for _, path := range append([]string{e.Path}, e.related...) {
			if shape.Path != "" && (within(path, shape.Path) || within(shape.Path, path)) || path == shape.meant {
				return true
			}
		}
	}
	return false
}

// within reports whether the setting at path is the one at outer or
// inside it.
func within(path, outer string) bool {
	rest, ok := strings.CutPrefix(path, outer)
	return ok && outer != "" && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// problems collects FieldErrors; it is the setting.Problems every
// section's Check reports to.
type problems struct{ list Problems }

// Bad implements setting.Problems.
func (p *problems) Bad(path, format string, args ...any) { p.add(path, nil, format, args...) }

// Between implements setting.Problems.
func (p *problems) Between(path, other, format string, args ...any) {
	p.add(path, []string{other}, format, args...)
}

// add records a problem with the setting at path; related names the other
// settings it involves.
func (p *problems) add(path string, related []string, format string, args ...any) {
	p.list = append(p.list, &FieldError{Path: path, Problem: fmt.Sprintf(format, args...), related: related})
}

// origin says where each setting's value came from: a line of the config
// file, or an environment variable or flag that overrode it.
type origin struct {
	file    string
	lines   map[string]int    // path → line of its key (or list item) in the file
	sources map[string]string // path → "$LLMRELAY_LISTEN", "the command line"
}

// locate fills in where each problem's setting was set.
func (o *origin) locate(ps Problems) {
	if o == nil {
		return
	}
	for _, e := range ps {
		if src, ok := o.sources[e.Path]; ok {
			e.Source = src
			continue
		}
		for _, p := range append([]string{e.Path}, e.related...) {
			if line, ok := o.lines[p]; ok {
				e.File, e.Line = o.file, line
				break
			}
		}
	}
}

// override records that a source other than the file set path.
func (o *origin) override(path, source string) {
	delete(o.lines, path)
	o.sources[path] = source
}
