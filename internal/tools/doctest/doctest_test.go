package main

import (
	"strings"
	"testing"
)

func TestMatches(t *testing.T) {
	tests := []struct {
		name     string
		expected string
		actual   string
		json     bool
		want     bool
	}{
		{"same text", "a\nb\n", "a\nb\n", false, true},
		{"trailing spaces and blank lines ignored", "\na\nb\n", "a  \nb\n\n", false, true},
		{"a changed word is a drift", "llmrelay serving\n", "llmrelay listening\n", false, false},
		{"a missing line is a drift", "a\nb\n", "a\n", false, false},
		{"wildcard within a line", "version … (go…)", "version v1.2-dirty (go1.26.8, linux/amd64)", false, true},
		{"a text wildcard does not cross lines", "a…b", "a\nb", false, false},
		{"a wildcard line stands for lines", "a\n…\nd", "a\nb\nc\nd", false, true},
		{"a wildcard line stands for at least one line", "a\n…\nd", "a\nd", false, false},
		{"lines after a wildcard line still count", "a\n…\nd", "a\nb\nc\ne", false, false},
		{"json ignores layout", `{"sequence": "1", "delta": {"text": "hello "}}`, "{\n  \"sequence\": \"1\",\n  \"delta\": {\n    \"text\": \"hello \"\n  }\n}\n", true, true},
		{"json keeps spaces in strings", `{"text": "hello"}`, `{"text": "hello "}`, true, false},
		{"json wildcard in a string", `{"delay": "…s"}`, `{"delay": "0.041s"}`, true, true},
		{"json wildcard across messages", `{"a": 1}…{"z": 2}`, "{\"a\": 1}\n{\"b\": 1}\n{\"z\": 2}", true, true},
		{"json escaped quote", `{"t": "a \"b\" c"}`, `{ "t" : "a \"b\" c" }`, true, true},
		{"regexp characters are literal", "a.c (x)", "abc (x)", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matches(tt.expected, tt.actual, tt.json); got != tt.want {
				t.Errorf("matches(%q, %q, json=%v) = %v, want %v", tt.expected, tt.actual, tt.json, got, tt.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	doc := strings.Join([]string{
		"# Title",
		"```sh",
		"not marked: ignored",
		"```",
		"<!-- test-docs file=a.yaml -->",
		"```yaml",
		"listen: x",
		"```",
		"<!-- test-docs server=a.yaml exit=1 env=KEY=sk-x env=B=2 -->",
		"",
		"````sh",
		"llmrelay check-config a.yaml",
		"```",
		"````",
		"Some prose between.",
		"<!-- test-docs-output json -->",
		"```text",
		"out",
		"```",
		"<!-- test-docs cwd=repo -->",
		"```go",
		"package main",
		"```",
	}, "\n")
	blocks, err := parse("x.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 {
		t.Fatalf("got %d blocks, want 3: %+v", len(blocks), blocks)
	}
	if b := blocks[0]; b.saveAs != "a.yaml" || b.code != "listen: x\n" {
		t.Errorf("file block: %+v", b)
	}
	b := blocks[1]
	if b.server != "a.yaml" || b.exit != 1 || strings.Join(b.env, " ") != "KEY=sk-x B=2" || b.code != "llmrelay check-config a.yaml\n```\n" || !b.hasOutput || b.output != "out\n" || !b.jsonMode || b.line != 11 {
		t.Errorf("command block: %+v", b)
	}
	if b := blocks[2]; b.lang != "go" || !b.inRepo || b.hasOutput {
		t.Errorf("go block: %+v", b)
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]string{
		"output without a block before":   "<!-- test-docs-output -->\n```\nx\n```\n",
		"marker followed by prose":        "<!-- test-docs -->\nprose\n```sh\nx\n```\n",
		"marker at the end":               "<!-- test-docs -->\n",
		"unknown option":                  "<!-- test-docs retries=3 -->\n```sh\nx\n```\n",
		"env without a value":             "<!-- test-docs env=KEY -->\n```sh\nx\n```\n",
		"a yaml block that cannot be run": "<!-- test-docs -->\n```yaml\nx: 1\n```\n",
		"two outputs":                     "<!-- test-docs -->\n```sh\nx\n```\n<!-- test-docs-output -->\n```\n1\n```\n<!-- test-docs-output -->\n```\n2\n```\n",
		"unclosed block":                  "<!-- test-docs -->\n```sh\nx\n",
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := parse("x.md", doc); err == nil {
				t.Errorf("parse accepted:\n%s", doc)
			}
		})
	}
}
