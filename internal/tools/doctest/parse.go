package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A block is one runnable fenced code block of a Markdown file, with the
// expected output that follows it (if any).
type block struct {
	file string // the Markdown file
	line int    // the line of the opening fence
	lang string // the fence's info string: sh, go, yaml...
	code string // the block's text

	// Options of the <!-- test-docs ... --> marker.
	saveAs string // file=NAME: not run; saved in the work dir as NAME
	server string // server=NAME: run against a server started with config NAME
	exit   int    // exit=N: the exit status the command must end with
	inRepo bool   // cwd=repo: run in the repository's root
	// env=NAME=VALUE (any number): set for the block and for the server
	// it runs against (a config's provider key, say).
	env []string

	// The expected output: the block after <!-- test-docs-output ... -->.
	hasOutput  bool
	outputLine int
	output     string
	jsonMode   bool // json: compare ignoring whitespace outside strings
}

const (
	runMarker    = "test-docs"
	outputMarker = "test-docs-output"
)

// parseFile reads the runnable blocks of a Markdown file.
func parseFile(path string) ([]*block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, string(data))
}

// parse reads the runnable blocks of Markdown text. A marker must be an
// HTML comment on a line of its own, followed (blank lines aside) by a
// fenced code block.
func parse(path, text string) ([]*block, error) {
	var (
		blocks  []*block
		last    *block // the last runnable block, which an output attaches to
		pending *marker
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if m, ok, err := parseMarker(trimmed); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, lineNo, err)
		} else if ok {
			if pending != nil {
				return nil, fmt.Errorf("%s:%d: marker without a code block after it", path, pending.line)
			}
			m.line = lineNo
			pending = m
			continue
		}
		fence, info, isFence := openingFence(line)
		if !isFence {
			if pending != nil && trimmed != "" {
				return nil, fmt.Errorf("%s:%d: marker must be followed by a fenced code block", path, pending.line)
			}
			continue
		}
		// Read the block to its closing fence.
		start := lineNo
		var body []string
		closed := false
		for sc.Scan() {
			lineNo++
			l := sc.Text()
			if t := strings.TrimSpace(l); len(t) >= len(fence) && strings.Trim(t, fence[:1]) == "" {
				closed = true
				break
			}
			body = append(body, l)
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: code block is not closed", path, start)
		}
		if pending == nil {
			continue
		}
		m := pending
		pending = nil
		code := strings.Join(body, "\n") + "\n"
		if m.output {
			if last == nil {
				return nil, fmt.Errorf("%s:%d: %s marker without a runnable block before it", path, m.line, outputMarker)
			}
			if last.hasOutput {
				return nil, fmt.Errorf("%s:%d: the block at line %d already has an expected output", path, m.line, last.line)
			}
			last.hasOutput, last.outputLine, last.output, last.jsonMode = true, start, code, m.json
			continue
		}
		b := &block{file: path, line: start, lang: info, code: code, saveAs: m.file, server: m.server, exit: m.exit, inRepo: m.inRepo, env: m.env}
		switch {
		case b.saveAs != "":
		case info == "sh" || info == "console" || info == "shell" || info == "bash":
		case info == "go" || info == "python":
		default:
			return nil, fmt.Errorf("%s:%d: a %q block can only be saved (file=NAME), not run", path, start, info)
		}
		blocks = append(blocks, b)
		if b.saveAs == "" {
			last = b
		}
	}
	if pending != nil {
		return nil, fmt.Errorf("%s:%d: marker without a code block after it", path, pending.line)
	}
	return blocks, sc.Err()
}

// openingFence reports whether line opens a fenced code block, and returns
// its fence (``` or more) and info string.
func openingFence(line string) (fence, info string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return "", "", false
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 {
			return t[:n], strings.TrimSpace(t[n:]), true
		}
	}
	return "", "", false
}

type marker struct {
	line   int
	output bool
	file   string
	server string
	exit   int
	inRepo bool
	env    []string
	json   bool
}

// parseMarker reads a <!-- test-docs OPTIONS --> or
// <!-- test-docs-output OPTIONS --> line.
func parseMarker(line string) (*marker, bool, error) {
	if !strings.HasPrefix(line, "<!--") || !strings.HasSuffix(line, "-->") {
		return nil, false, nil
	}
	fields := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(line, "<!--"), "-->"))
	if len(fields) == 0 || (fields[0] != runMarker && fields[0] != outputMarker) {
		return nil, false, nil
	}
	m := &marker{output: fields[0] == outputMarker}
	for _, opt := range fields[1:] {
		key, value, _ := strings.Cut(opt, "=")
		switch {
		case m.output && opt == "json":
			m.json = true
		case !m.output && key == "file" && value != "":
			m.file = value
		case !m.output && key == "server" && value != "":
			m.server = value
		case !m.output && key == "exit":
			n, err := strconv.Atoi(value)
			if err != nil {
				return nil, false, fmt.Errorf("%s: exit=%q is not a number", fields[0], value)
			}
			m.exit = n
		case !m.output && opt == "cwd=repo":
			m.inRepo = true
		case !m.output && key == "env" && strings.Contains(value, "="):
			m.env = append(m.env, value)
		default:
			return nil, false, fmt.Errorf("%s: unknown option %q", fields[0], opt)
		}
	}
	return m, true, nil
}
