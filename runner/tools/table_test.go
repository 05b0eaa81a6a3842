package tools

import (
	"slices"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// TestEveryToolHasARunner: every tool package tool describes has the
// runner's part here (a builder and a work estimate), so that adding a
// description without its builder fails here, not in a user's run.
func TestEveryToolHasARunner(t *testing.T) {
	if !slices.Equal(Names(), tool.Names()) {
		t.Errorf("runner tools %v, described tools %v: add the runner's part to runners", Names(), tool.Names())
	}
	for name := range runners {
		if _, ok := tool.Lookup(name); !ok {
			t.Errorf("runners has %q, which package tool does not describe", name)
		}
	}
	for _, spec := range table {
		if spec.build == nil || spec.work == nil || spec.Metric == "" || spec.Install == "" || len(spec.Programs) == 0 {
			t.Errorf("%s: incomplete entry (a builder, a work estimate, a metric, programs and an install hint are required)", spec.Name)
		}
	}
}

// TestDescriptionsAgree: what the other packages read of the table says
// what the table says (they read it; this catches a description whose
// facts contradict each other).
func TestDescriptionsAgree(t *testing.T) {
	if !slices.Equal(scenarios.Tools, tool.Names()) {
		t.Errorf("scenarios.Tools = %v, the table has %v", scenarios.Tools, tool.Names())
	}
	families := map[parsers.Family]bool{}
	for _, spec := range table {
		families[spec.Family] = true
		if scenarios.RDMAOnly(spec.Name) != (spec.NeedsRDMA && !spec.SelectsTransport) {
			t.Errorf("%s: scenarios.RDMAOnly disagrees with NeedsRDMA %v, SelectsTransport %v", spec.Name, spec.NeedsRDMA, spec.SelectsTransport)
		}
		// The serving image's tools have an image family of their own
		// (nixl, nccl: not in the tools image); the tools image's, none
		// or one it may override (perftest with CUDA).
		switch fam := scenarios.ImageFamily(spec.Name); {
		case spec.Source == tool.SourceServing && (fam != scenarios.ImageNixl && fam != scenarios.ImageNCCL):
			t.Errorf("%s: a serving-image tool of image family %q, want nixl or nccl", spec.Name, fam)
		case spec.Source == tool.SourceTools && fam != "" && fam != scenarios.ImagePerftest:
			t.Errorf("%s: a tools-image tool of image family %q", spec.Name, fam)
		}
		for _, name := range spec.Programs {
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
