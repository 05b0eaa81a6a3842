package runner

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// executorLayers are the executor's files from the top of a run down: a
// file may use what its own layer and the layers below it declare, never
// what a layer above it does. The stages of a run come first, each calling
// the next ones down; the parts they share (one repetition's sides and
// readiness, the results folder, progress, the run's state) sit below them.
var executorLayers = [][]string{
	{"run.go"},         // Run: the stages in order
	{"finish.go"},      // 6. report.json, the summary, the exit error
	{"retest.go"},      // 5. low pairs run again after the matrix
	{"rounds.go"},      // 3. rounds of jobs at once, a job's legs in turn
	{"skips.go"},       //    why a job will not run (RDMA, GPU, preflight)
	{"provision.go"},   // 1. scenario and plan saved, endpoints, discovery; 2. preflight (runner/preflight); etcd; undone at the end
	{"repetitions.go"}, // 4. one leg's repetitions, clock reruns, the path proof (runner/pathproof), the verdict
	{"repetition.go"},  //    one repetition: sides started, waited for, parsed
	{"ready.go"},
	{"side.go"},
	{"launcher.go", "nccljson.go"},
	{"record.go", "sharedport.go", "subst.go", "output.go", "parse.go", "transport.go"},
	{"results.go", "progress.go", "capabilities.go", "hints.go", "errors.go"},
	{"state.go", "doc.go"}, // Config and the run's data
}

// stateFile holds the run's data (Config, run, legRun): its fields may name
// the types of any layer; its functions, like every file's, only what is
// below them.
const stateFile = "state.go"

// TestExecutorFilesCallOneWay reads the executor's own source with
// go/types (imports stubbed: only this package's names matter) and checks
// that every use of a name declared in this package points at its own
// layer or one below (executorLayers), and that every file has a layer.
func TestExecutorFilesCallOneWay(t *testing.T) {
	unplaced, up := layerViolations(t, ".", executorLayers)
	for _, f := range unplaced {
		t.Errorf("%s has no layer in executorLayers: place it", f)
	}
	for _, u := range up {
		t.Errorf("uses a layer above it: %s", u)
	}
}

// TestCallOneWayCheckSeesViolations proves the check is not blind: a file
// that calls a function, a method and reads a field of the file above it
// is caught on each count; the state file may name the type above it in a
// field, but not call what is above it.
func TestCallOneWayCheckSeesViolations(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"top.go":    "package runner\n\ntype top struct{ n int }\n\nfunc (t *top) m() {}\n\nfunc helperTop() {}\n\nfunc useLow() { helperLow() }\n",
		"low.go":    "package runner\n\nfunc helperLow() { helperTop(); var x top; x.m(); _ = x.n }\n",
		"state.go":  "package runner\n\ntype data struct{ t *top }\n\nfunc (d *data) f() { helperTop() }\n",
		"lonely.go": "package runner\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unplaced, up := layerViolations(t, dir, [][]string{{"top.go"}, {"low.go"}, {"state.go"}})
	if !slices.Equal(unplaced, []string{"lonely.go"}) {
		t.Errorf("unplaced %v, want [lonely.go]", unplaced)
	}
	want := []string{"low.go → top.go: helperTop, top, m, n", "state.go → top.go: helperTop"}
	if !slices.Equal(up, want) {
		t.Errorf("violations:\n%s\nwant\n%s", strings.Join(up, "\n"), strings.Join(want, "\n"))
	}
}

// layerViolations lists the files of dir that have no layer, and the uses
// that point at a layer above their own ("from → to: names").
func layerViolations(t *testing.T, dir string, layers [][]string) (unplaced, up []string) {
	t.Helper()
	layer := map[string]int{}
	for i, files := range layers {
		for _, f := range files {
			layer[f] = i
		}
	}
	uses, files, typeNames := fileUses(t, dir)
	for _, f := range files {
		if _, ok := layer[f]; !ok {
			unplaced = append(unplaced, f)
		}
	}
	for from, tos := range uses {
		for to, names := range tos {
			if from == stateFile {
				names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return typeNames[n] })
			}
			if layer[to] < layer[from] && len(names) > 0 {
				up = append(up, fmt.Sprintf("%s → %s: %s", from, to, strings.Join(names, ", ")))
			}
		}
	}
	sort.Strings(unplaced)
	sort.Strings(up)
	return unplaced, up
}

// fileUses maps each non-test file of the package in dir to the files
// whose declarations it uses (package-level names, methods and fields of
// the package's own types), with the names used.
func fileUses(t *testing.T, dir string) (uses map[string]map[string][]string, files []string, typeNames map[string]bool) {
	t.Helper()
	fset := token.NewFileSet()
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var parsed []*ast.File
	typeNames = map[string]bool{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		files = append(files, filepath.Base(n))
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: stubImporter{}, Error: func(error) {}} // other packages' names stay unresolved
	pkg, _ := conf.Check("runner", fset, parsed, info)
	out := map[string]map[string][]string{}
	add := func(from string, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != pkg.Scope() {
			return // a local variable or parameter
		}
		if _, ok := obj.(*types.Func); !ok && obj.Parent() != pkg.Scope() {
			if v, ok := obj.(*types.Var); !ok || !v.IsField() {
				return
			}
		}
		if _, ok := obj.(*types.TypeName); ok {
			typeNames[obj.Name()] = true
		}
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if to == from {
			return
		}
		if out[from] == nil {
			out[from] = map[string][]string{}
		}
		if !slices.Contains(out[from][to], obj.Name()) {
			out[from][to] = append(out[from][to], obj.Name())
		}
	}
	for i, f := range parsed {
		from := files[i]
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				add(from, info.Uses[id])
			}
			return true
		})
	}
	return out, files, typeNames
}

// stubImporter gives every import an empty package: the check needs this
// package's own names only, and compiling the dependencies would be slow.
type stubImporter struct{}

func (stubImporter) Import(p string) (*types.Package, error) {
	pkg := types.NewPackage(p, path.Base(p))
	pkg.MarkComplete()
	return pkg, nil
}
