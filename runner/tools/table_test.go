package tools

import (
	"slices"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestEveryListMatchesTheToolTable: the packages that cannot import this
// table (scenarios, which it imports; parsers, which stays below it) keep
// lists of their own; each must say what the table says, so that adding a
// tool here and forgetting a list fails here, not in a user's run.
func TestEveryListMatchesTheToolTable(t *testing.T) {
	if !slices.Equal(scenarios.Tools, Names()) {
		t.Errorf("scenarios.Tools = %v, the table has %v", scenarios.Tools, Names())
	}
	families := map[parsers.Family]bool{}
	for _, spec := range table {
		families[spec.Family] = true
		if spec.build == nil || spec.work == nil || spec.Metric == "" || spec.Install == "" || len(spec.Binaries) == 0 {
			t.Errorf("%s: incomplete entry (a builder, a work estimate, a metric, binaries and an install hint are required)", spec.Name)
		}
		if want := spec.NeedsRDMA && !spec.SelectsTransport; scenarios.RDMAOnly(spec.Name) != want {
			t.Errorf("%s: scenarios.RDMAOnly = %v, the table says %v (NeedsRDMA %v, SelectsTransport %v)",
				spec.Name, scenarios.RDMAOnly(spec.Name), want, spec.NeedsRDMA, spec.SelectsTransport)
		}
		// The family a scenario names the tool's image by: the GPU tools'
		// own (nixl, nccl: not in the tools image); the tools image's, none
		// or one it may override (perftest with CUDA).
		switch fam := scenarios.ImageFamily(spec.Name); {
		case spec.Image == ImageGPU && (fam != scenarios.ImageNixl && fam != scenarios.ImageNCCL):
			t.Errorf("%s: a GPU-image tool of image family %q, want nixl or nccl", spec.Name, fam)
		case spec.Image == ImageTools && fam != "" && fam != scenarios.ImagePerftest:
			t.Errorf("%s: a tools-image tool of image family %q", spec.Name, fam)
		}
		for _, name := range append([]string{spec.Parser}, spec.Binaries...) {
			if f, ok := parsers.FamilyOf(name); !ok || f != spec.Family {
				t.Errorf("%s: parsers put %q in family %q (known: %v), the table in %q", spec.Name, name, f, ok, spec.Family)
			}
		}
	}
	for _, c := range scenarios.Collectives {
		if f, _ := parsers.FamilyOf(NCCLBinary(c)); f != parsers.FamilyNCCL {
			t.Errorf("collective %s: parsers do not read %s as nccl-tests", c, NCCLBinary(c))
		}
	}
	for _, name := range parsers.Tools() {
		if f, _ := parsers.FamilyOf(name); !families[f] {
			t.Errorf("parsers read %q (family %q), which no tool of the table has", name, f)
		}
	}
}
