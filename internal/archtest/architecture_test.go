package archtest

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// ownerRef matches a Go name as the table writes it: a package, then a
// top-level name, then perhaps a method or field (`retry.Plan.Failed`).
var ownerRef = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Za-z_][A-Za-z0-9_]*)(?:\\.([A-Za-z_][A-Za-z0-9_]*))?(?:\\(\\))?`")

// TestDecisionTableNamesLiveOwners: every row of docs/ARCHITECTURE.md's
// "Who decides what" table names its owner in Go (`pkg.Name` or
// `pkg.Type.Method`), and every Go name it writes in its owner column
// exists in that package of internal/.
func TestDecisionTableNamesLiveOwners(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(t, string(doc), "## Who decides what")
	if len(rows) < 20 {
		t.Fatalf("the table has %d rows; want the whole map", len(rows))
	}
	pkgs := map[string]*pkgNames{}
	for _, row := range rows {
		decision, owner := row[0], row[1]
		refs := ownerRef.FindAllStringSubmatch(owner, -1)
		named := 0
		for _, m := range refs {
			p, ok := pkgs[m[1]]
			if !ok {
				p = loadPackage(t, m[1])
				pkgs[m[1]] = p
			}
			if p == nil {
				continue // not one of llmrelay's packages (a library's name)
			}
			named++
			if !p.has(m[2], m[3]) {
				t.Errorf("%q names %s, which internal/%s does not declare", decision, strings.Trim(m[0], "`"), p.dir)
			}
		}
		if named == 0 {
			t.Errorf("%q names no owner in Go (`pkg.Name`)", decision)
		}
	}
}

// tableRows returns the cells of the first table after heading, without
// its header and separator rows.
func tableRows(t *testing.T, doc, heading string) [][]string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no %q section", heading)
	}
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(doc[i+len(heading)+2:], "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) < 2 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.TrimSpace(cells[0]) == "decision" {
			continue
		}
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, cells)
	}
	return rows
}

// pkgNames is what one package declares: its top-level names, and the
// methods and fields of its types.
type pkgNames struct {
	dir     string
	top     map[string]bool
	members map[string]map[string]bool // type → method or field
}

func (p *pkgNames) has(name, member string) bool {
	if !p.top[name] {
		return false
	}
	return member == "" || p.members[name][member]
}

// loadPackage parses the non-test files of the package named name under
// internal/ (the directory whose last element is name, outside testdata,
// which holds no package); nil when there is none.
func loadPackage(t *testing.T, name string) *pkgNames {
	t.Helper()
	var dir string
	_ = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if err == nil && d.IsDir() && d.Name() == name && dir == "" {
			dir = path
		}
		return nil
	})
	if dir == "" {
		return nil
	}
	fset := token.NewFileSet()
	parsed, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(filepath.Join(root, "internal"), dir)
	p := &pkgNames{dir: rel, top: map[string]bool{}, members: map[string]map[string]bool{}}
	member := func(typ, name string) {
		if p.members[typ] == nil {
			p.members[typ] = map[string]bool{}
		}
		p.members[typ][name] = true
	}
	for _, pkg := range parsed {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						p.top[d.Name.Name] = true
						continue
					}
					typ := d.Recv.List[0].Type
					for {
						switch x := typ.(type) {
						case *ast.StarExpr:
							typ = x.X
							continue
						case *ast.IndexExpr:
							typ = x.X
							continue
						case *ast.IndexListExpr:
							typ = x.X
							continue
						}
						break
					}
					if id, ok := typ.(*ast.Ident); ok {
						member(id.Name, d.Name.Name)
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							p.top[s.Name.Name] = true
							if st, ok := s.Type.(*ast.StructType); ok {
								for _, f := range st.Fields.List {
									for _, n := range f.Names {
										member(s.Name.Name, n.Name)
									}
								}
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								p.top[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return p
}

// TestEngineImportsNoTransport: the engine is plain Go, callable from any
// door; only the doors (internal/service, the chain) know gRPC.
func TestEngineImportsNoTransport(t *testing.T) {
	_ = filepath.WalkDir(filepath.Join(root, "internal", "engine"), func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, "google.golang.org/grpc") || strings.Contains(imp, "net/http") {
				t.Errorf("%s imports %s", path, imp)
			}
		}
		return nil
	})
}

// TestCLIImportsNoEngine: the command line's client commands read a call's
// errors as any client does, by the reasons on the wire (apierr's), not
// by the engine's names; it reaches the engine only through the server it
// runs (internal/server).
func TestCLIImportsNoEngine(t *testing.T) {
	dir := filepath.Join(root, "internal", "cli")
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if imp == "github.com/llmrelay/llmrelay/internal/engine" || strings.HasPrefix(imp, "github.com/llmrelay/llmrelay/internal/engine/") {
			t.Errorf("%s imports %s", dir, imp)
		}
	}
}
