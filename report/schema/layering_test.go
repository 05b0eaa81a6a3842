package schema_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rdmabench/rdmabench/"

// goList runs go list with format over the packages (go list reads the
// real import graph, build files and all).
func goList(t *testing.T, format string, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-f", format}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestOnlyHTMLDrawsCharts keeps the chart library in report/html: no other
// package of the module imports go-echarts, in its code or its tests.
func TestOnlyHTMLDrawsCharts(t *testing.T) {
	lines := goList(t, "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", module+"...")
	if len(lines) < 10 {
		t.Fatalf("go list found %d packages: %q", len(lines), lines)
	}
	for _, l := range lines {
		pkg, imports, _ := strings.Cut(l, " ")
		if pkg != module+"report/html" && strings.Contains(imports, "github.com/go-echarts/") {
			t.Errorf("%s imports go-echarts: charts are report/html's alone", pkg)
		}
	}
}

// TestSchemaReadersPullNoRenderer: report.json's schema, and the packages
// that read and fill results through it (the judge, the path proof,
// preflight, NIC discovery), depend on no renderer: no chart library, no
// HTML, and of report's packages on the schema alone; the schema, the judge
// and NIC discovery on no terminal table either (preflight and the path
// proof read the plan, whose printed form is one).
func TestSchemaReadersPullNoRenderer(t *testing.T) {
	for _, pkg := range []string{"report/schema", "runner/judge", "runner/pathproof", "runner/preflight", "nic"} {
		readsPlan := pkg == "runner/pathproof" || pkg == "runner/preflight"
		renderer := func(dep string) bool {
			return strings.HasPrefix(dep, "github.com/go-echarts/") || dep == "html/template" ||
				!readsPlan && strings.HasPrefix(dep, "github.com/olekukonko/tablewriter") ||
				strings.HasPrefix(dep, module+"report/") && dep != module+"report/schema"
		}
		for _, dep := range goList(t, "{{.ImportPath}}", "-deps", module+pkg) {
			if renderer(dep) {
				t.Errorf("%s depends on %s: the schema and its readers pull in no renderer", pkg, dep)
			}
		}
	}
}
