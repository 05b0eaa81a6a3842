package backend

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// backendNames are what Backend.Name returns, as written in a comparison:
// a string literal, or scenarios' constant.
var backendNames = map[string]bool{
	`"local"`: true, `"ssh"`: true, `"kube"`: true,
	"scenarios.BackendLocal": true, "scenarios.BackendSSH": true, "scenarios.BackendKube": true,
}

// implementations are the backends' packages, whose concrete types no
// one else may assert to.
var implementations = map[string]bool{"local": true, "ssh": true, "kube": true, "remote": true}

// TestNoBackendNameChecks keeps the contract whole: outside the backends
// (and tests), no code decides by a backend's name (x.Name() == "local")
// or its concrete type (be.(*kube.Backend)). A behaviour that differs
// between backends is a capability in backend.go, which says when it is
// used. The scenario's backend name (sc.Backend, plan.Backend) is not a
// Backend and is not looked at.
func TestNoBackendNameChecks(t *testing.T) {
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch {
			case rel == filepath.Join("runner", "backend"), rel != "." && strings.HasPrefix(d.Name(), "."),
				d.Name() == "testdata", d.Name() == "node_modules", rel == filepath.Join("test", "kubecluster", "k8s"):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		files++
		for _, v := range nameChecks(t, p) {
			t.Errorf("%s: decide by a capability of runner/backend/backend.go, not the backend's name or type", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under %s: not the module", files, root)
	}
}

// nameChecks lists one file's comparisons of a Name() call with a backend's
// name, and its assertions to a backend's concrete type.
func nameChecks(t *testing.T, name string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	imported := map[string]bool{} // the names the backends' packages go by here
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if dir, base := filepath.Split(p); strings.HasSuffix(dir, "runner/backend/") && implementations[base] {
			imported[base] = true
			if im.Name != nil {
				imported[im.Name.Name] = true
			}
		}
	}
	var bad []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			call, other := n.X, n.Y
			if isNameCall(other) {
				call, other = other, call
			}
			if (n.Op == token.EQL || n.Op == token.NEQ) && isNameCall(call) && backendNames[exprText(other)] {
				bad = append(bad, fset.Position(n.Pos()).String()+": compares Name() with "+exprText(other))
			}
		case *ast.TypeAssertExpr:
			if star, ok := n.Type.(*ast.StarExpr); ok {
				if sel, ok := star.X.(*ast.SelectorExpr); ok && imported[exprText(sel.X)] {
					bad = append(bad, fset.Position(n.Pos()).String()+": asserts to *"+exprText(sel))
				}
			}
		}
		return true
	})
	return bad
}

func isNameCall(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok || len(c.Args) > 0 {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Name"
}

// exprText is an identifier, a selector or a literal as written.
func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.BasicLit:
		return e.Value
	case *ast.SelectorExpr:
		return exprText(e.X) + "." + e.Sel.Name
	}
	return ""
}

// TestNameCheckSeesViolations proves the check is not blind: a comparison
// either way round, with a literal or the constant, and an assertion to a
// backend's type under another name are each caught; a scenario's backend
// name and another Name() are not.
func TestNameCheckSeesViolations(t *testing.T) {
	src := `package x

import (
	kb "github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/scenarios"
)

func f(be interface{ Name() string }, sc *scenarios.Scenario, e interface{ Name() string }) {
	_ = be.Name() == "local"
	_ = scenarios.BackendKube != be.Name()
	_, _ = be.(*kb.Backend)
	_ = sc.Backend == scenarios.BackendKube
	_ = e.Name() == "report.json"
}
`
	name := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := nameChecks(t, name)
	want := []string{`Name() with "local"`, "Name() with scenarios.BackendKube", "*kb.Backend"}
	if len(bad) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(bad), len(want), strings.Join(bad, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(bad[i], w) {
			t.Errorf("violation %d %q does not say %q", i, bad[i], w)
		}
	}
}
