package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goBlocks returns the ```go blocks of a Markdown text, by the line of
// their opening fence.
func goBlocks(text string) map[int]string {
	blocks := map[int]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		fence, info, ok := openingFence(lines[i])
		if !ok {
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
			body = append(body, lines[i])
		}
		if info == "go" {
			blocks[start+1] = strings.Join(body, "\n")
		}
	}
	return blocks
}

// parseGoBlock parses a block as a file, or as a function's body when it is
// a fragment of statements.
func parseGoBlock(code string) (*ast.File, error) {
	fset := token.NewFileSet()
	if strings.HasPrefix(strings.TrimSpace(code), "package ") {
		return parser.ParseFile(fset, "", code, 0)
	}
	return parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}\n", 0)
}

// collectErrorUnchecked returns the names of the error variables of the
// client.Collect calls in f whose first use is not `if err != nil`: a check
// of errors.As alone lets ErrNoFinal (a plain error) through to an empty
// answer.
func collectErrorUnchecked(f *ast.File) []string {
	var bad []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			if name := collectErr(n.Init); name != "" && !isNotNil(n.Cond, name) {
				bad = append(bad, name)
			}
		case *ast.BlockStmt:
			for i, s := range n.List {
				name := collectErr(s)
				if name == "" {
					continue
				}
				for _, next := range n.List[i+1:] {
					if !uses(next, name) {
						continue
					}
					if ifs, ok := next.(*ast.IfStmt); !ok || ifs.Init != nil || !isNotNil(ifs.Cond, name) {
						bad = append(bad, name)
					}
					break
				}
			}
		}
		return true
	})
	return bad
}

// collectErr returns the error variable s assigns a client.Collect call's
// error to, or "".
func collectErr(s ast.Stmt) string {
	as, ok := s.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 || len(as.Lhs) != 2 {
		return ""
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok {
		return ""
	}
	if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Collect" {
		return ""
	}
	if id, ok := as.Lhs[1].(*ast.Ident); ok && id.Name != "_" {
		return id.Name
	}
	return ""
}

func isNotNil(e ast.Expr, name string) bool {
	b, ok := e.(*ast.BinaryExpr)
	if !ok || b.Op != token.NEQ {
		return false
	}
	x, okX := b.X.(*ast.Ident)
	y, okY := b.Y.(*ast.Ident)
	return okX && okY && x.Name == name && y.Name == "nil"
}

func uses(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// TestGoExamplesCheckCollectsError: every Go example of the documentation
// that calls client.Collect and then looks at its error checks err != nil
// first. Collect's errors are an *Error or ErrNoFinal; an example that only
// asks errors.As for an *Error prints an empty answer for the other.
func TestGoExamplesCheckCollectsError(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	checked := 0
	for _, page := range docPages(t, root, "README.md", "client/README.md") {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for line, code := range goBlocks(string(data)) {
			if !strings.Contains(code, "Collect(") {
				continue
			}
			f, err := parseGoBlock(code)
			if err != nil {
				t.Errorf("%s:%d: a Go block that calls Collect does not parse: %v", rel, line, err)
				continue
			}
			checked++
			for _, name := range collectErrorUnchecked(f) {
				t.Errorf("%s:%d: Collect's error %s is used before an `if %s != nil` check (ErrNoFinal is not an *Error)", rel, line, name, name)
			}
		}
	}
	if checked == 0 {
		t.Error("no Go block of the documentation calls Collect: the test checks nothing")
	}
}

func TestCollectErrorUnchecked(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		bad        bool
	}{
		{"checked", "final, err := client.Collect(s, nil)\nif err != nil {\n\tlog.Fatal(err)\n}\nuse(final)", false},
		{"checked in the if", "if final, err := client.Collect(s, nil); err != nil {\n\tlog.Fatal(err)\n} else {\n\tuse(final)\n}", false},
		{"never used", "final, err := client.Collect(s, nil)\nuse(final)", false},
		{"errors.As only", "final, err := client.Collect(s, nil)\nvar e *client.Error\nif errors.As(err, &e) {\n\tlog.Fatal(e)\n}\nuse(final)", true},
		{"errors.As in the if", "if _, err := client.Collect(s, nil); errors.As(err, &e) {\n}", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseGoBlock(tc.code)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(collectErrorUnchecked(f)) > 0; got != tc.bad {
				t.Errorf("unchecked = %v, want %v", got, tc.bad)
			}
		})
	}
}
