package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pureDirs are the planner and the judge: pure, scenario or measurements
// in, plan or verdict out.
var pureDirs = []string{"plan", "judge"}

// TestPlannerAndJudgeStayPure keeps the import direction one way: the
// executor (this package) uses runner/plan and runner/judge, never the
// other way round, and neither of them reaches a backend (its interface or
// an implementation), the network or the process table. go list reads the real import graph,
// so a new import anywhere in their dependency closure is caught.
func TestPlannerAndJudgeStayPure(t *testing.T) {
	const mod = "github.com/rdmabench/rdmabench/"
	// Of the runner's own packages, only these may be under the planner
	// and the judge: the tool table and the endpoint data model (not the
	// backend interface: runner/backend is for the executor).
	allowed := map[string]bool{
		mod + "runner/plan":     true,
		mod + "runner/judge":    true,
		mod + "runner/tools":    true,
		mod + "runner/endpoint": true,
	}
	// Anywhere in the closure: processes, sockets, signals. (os and
	// net/url are reached through scenarios and report/schema, which read and
	// write files for others; the direct-import check below keeps the
	// planner and the judge themselves off them.)
	forbidden := []string{"os/exec", "os/signal", "net", "net/http", "plugin"}
	for _, dir := range pureDirs {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+dir).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v\n%s", dir, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
			if (d == mod+"runner" || strings.HasPrefix(d, mod+"runner/")) && !allowed[d] {
				t.Errorf("runner/%s depends on %s: the planner and the judge must stay pure (scenario/measurements in, plan/verdict out)", dir, d)
			}
		}
		for _, f := range forbidden {
			if deps[f] {
				t.Errorf("runner/%s depends on %s: the planner and the judge must stay pure (scenario/measurements in, plan/verdict out)", dir, f)
			}
		}
	}
}

// TestPlannerAndJudgeDoNoIO reads the planner's and the judge's own
// source (every non-test file, whatever its build tags): no import that
// reaches files, the network, the process, randomness or the log, and no
// reading of the clock, so the same input always gives the same output.
// time itself is allowed for time.Duration.
func TestPlannerAndJudgeDoNoIO(t *testing.T) {
	forbiddenImport := func(p string) bool {
		switch p {
		case "os", "net", "syscall", "unsafe", "io/fs", "io/ioutil", "path/filepath",
			"log", "log/slog", "math/rand", "math/rand/v2", "crypto/rand", "runtime":
			return true
		}
		return strings.HasPrefix(p, "os/") || strings.HasPrefix(p, "net/") ||
			strings.HasPrefix(p, "golang.org/x/sys/")
	}
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true,
		"After": true, "AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true}
	for _, dir := range pureDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			for _, b := range pureViolations(t, name, forbiddenImport, clock) {
				t.Errorf("%s: the planner and the judge must stay pure (no I/O, no clock)", b)
			}
		}
	}
}

// pureViolations lists the forbidden imports of one file and its calls of
// the clock through the time package (under whatever name it is imported).
func pureViolations(t *testing.T, name string, forbiddenImport func(string) bool, clock map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var bad []string
	timeName := ""
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if forbiddenImport(p) {
			bad = append(bad, fset.Position(im.Pos()).String()+": imports "+p)
		}
		if p == "time" {
			timeName = "time"
			if im.Name != nil {
				timeName = im.Name.Name
			}
		}
	}
	if timeName == "" {
		return bad
	}
	if timeName == "." {
		return append(bad, fset.Position(f.Package).String()+": imports time with a dot: the clock check cannot see through it")
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == timeName && clock[sel.Sel.Name] {
			bad = append(bad, fset.Position(sel.Pos()).String()+": reads the clock (time."+sel.Sel.Name+")")
		}
		return true
	})
	return bad
}

// TestPurityCheckSeesViolations proves the source check is not blind: a
// file that reads a file, dials, reads the clock under another name and
// draws random numbers is caught on each count.
func TestPurityCheckSeesViolations(t *testing.T) {
	dir := t.TempDir()
	src := `package plan

import (
	"net"
	"os"
	"math/rand"
	tm "time"
)

func f() {
	_, _ = os.ReadFile("x")
	_, _ = net.Dial("tcp", "x")
	_ = tm.Now()
	_ = tm.Since(tm.Time{})
	_ = rand.Int()
	_ = tm.Second
}
`
	name := filepath.Join(dir, "bad.go")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	forbidden := func(p string) bool { return p == "os" || p == "net" || p == "math/rand" }
	clock := map[string]bool{"Now": true, "Since": true}
	bad := pureViolations(t, name, forbidden, clock)
	want := []string{"imports net", "imports os", "imports math/rand", "time.Now", "time.Since"}
	if len(bad) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(bad), len(want), strings.Join(bad, "\n"))
	}
	for _, w := range want {
		found := false
		for _, b := range bad {
			found = found || strings.Contains(b, w)
		}
		if !found {
			t.Errorf("violation %q not reported in:\n%s", w, strings.Join(bad, "\n"))
		}
	}
}
