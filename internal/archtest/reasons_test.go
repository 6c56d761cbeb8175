package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// reasonValue is what an ErrorInfo reason looks like: UPPER_SNAKE.
var reasonValue = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)

// reasonsOutsideTheProtos are the reasons of internal/ that no gRPC
// status carries, so that the protos rightly leave them out, and the doc
// that names them instead.
var reasonsOutsideTheProtos = map[string]string{
	// The HTTP door's token count (POST /v1/messages/count_tokens): no
	// gRPC method counts tokens.
	"TOKEN_COUNTING_NOT_SUPPORTED": "docs/http.md",
	// A log line's reason for gRPC's own INTERNAL, which carries no
	// ErrorInfo.
	"CLIENT_PROTOCOL_ERROR": "docs/observability.md",
}

// TestProtosNameEveryReason: every ErrorInfo reason the server can send,
// each a constant Reason... = "UPPER_SNAKE" of a package of internal/, is
// named in the protos' lists of reasons (proto/llmrelay/v1 and the admin
// API's), the contract clients switch on. A reason added without its line
// there fails here.
func TestProtosNameEveryReason(t *testing.T) {
	var protos strings.Builder
	for _, p := range []string{"proto/llmrelay/v1/llmrelay.proto", "proto/llmrelay/admin/v1/admin.proto"} {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		protos.Write(b)
	}
	reasons := reasonConstants(t)
	// So many that a scan that found none, or only some, cannot pass.
	if len(reasons) < 50 {
		t.Fatalf("found %d reason constants in internal/, want the server's 50 or more", len(reasons))
	}
	for reason, where := range reasons {
		named := protos.String()
		doc := "the protos"
		if d, ok := reasonsOutsideTheProtos[reason]; ok {
			b, err := os.ReadFile(filepath.Join(root, d))
			if err != nil {
				t.Fatal(err)
			}
			named, doc = string(b), d
		}
		if !regexp.MustCompile(`\b` + reason + `\b`).MatchString(named) {
			t.Errorf("reason %s (%s) is not named in %s", reason, where, doc)
		}
	}
}

// reasonConstants returns the string constants named Reason... whose
// value is UPPER_SNAKE, declared in the non-test files of internal/, each
// with the file that declares it.
func reasonConstants(t *testing.T) map[string]string {
	t.Helper()
	reasons := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "testdata":
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Reason") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err == nil && reasonValue.MatchString(v) {
						rel, _ := filepath.Rel(root, path)
						reasons[v] = rel
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reasons
}
