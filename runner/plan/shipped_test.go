package plan

import (
	"bytes"
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestGoldenShippedPlans compiles every scenario shipped in the binary and
// compares its plan (JSON and table) with testdata/plans/shipped-NAME.*.
func TestGoldenShippedPlans(t *testing.T) {
	shipped := scenarios.ShippedScenarios()
	if len(shipped) == 0 {
		t.Fatal("no shipped scenarios")
	}
	for _, sc := range shipped {
		t.Run(sc.Name, func(t *testing.T) {
			s, err := scenarios.LoadBytes(sc.Name+".yaml", sc.Data)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			p, err := Compile(s, CompileOptions{HostGPUs: fourGPUs})
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			if p.NumRounds() == 0 {
				t.Fatalf("%s plans no rounds (skipped: %+v)", sc.Name, p.Skipped)
			}
			var js, table, summary bytes.Buffer
			if err := WriteJSON(&js, p); err != nil {
				t.Fatal(err)
			}
			if err := WriteTable(&table, p); err != nil {
				t.Fatal(err)
			}
			if err := WriteSummary(&summary, p); err != nil {
				t.Fatal(err)
			}
			golden(t, "plans/shipped-"+sc.Name+".json", js.Bytes())
			golden(t, "plans/shipped-"+sc.Name+".txt", table.Bytes())
			golden(t, "plans/shipped-"+sc.Name+".summary.txt", summary.Bytes())
		})
	}
}

// TestShippedLoopbackWithoutRDMA is `rdmabench run loopback.yaml` on a
// laptop: the RDMA tests are skipped with a reason, the TCP ones planned.
func TestShippedLoopbackWithoutRDMA(t *testing.T) {
	sc, ok := scenarios.ShippedScenario("loopback")
	if !ok {
		t.Skip("loopback scenario not shipped")
	}
	s, err := scenarios.LoadBytes("loopback.yaml", sc.Data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compileHeld(s, CompileOptions{HasRDMA: func(endpoint.Endpoint) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	planned := map[string]bool{}
	for _, r := range p.Rounds {
		planned[r.Test] = true
	}
	skipped := map[string]bool{}
	for _, s := range p.Skipped {
		skipped[s.Test] = true
	}
	for _, test := range s.Tests {
		rdma := test.Requires == scenarios.RequiresRDMA
		if rdma && (!skipped[test.Name] || planned[test.Name]) {
			t.Errorf("RDMA test %s planned without RDMA", test.Name)
		}
		if !rdma && (!planned[test.Name] || skipped[test.Name]) {
			t.Errorf("TCP test %s not planned", test.Name)
		}
	}
}

// TestCollectiveJobNamedByRanks: a job of ranks (NCCL) is named by how many
// ranks it has and the first and last, not as if it went from one to the
// other (decode-0->prefill-1 read as a pair).
func TestCollectiveJobNamedByRanks(t *testing.T) {
	sc, _ := scenarios.ShippedScenario("wideep")
	s, err := scenarios.LoadBytes("wideep.yaml", sc.Data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(s, CompileOptions{HostGPUs: fourGPUs})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := p.EachRound(func(r *Round) error {
		for _, j := range r.Jobs {
			if j.Tool == scenarios.ToolNCCL {
				ids = append(ids, j.ID)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != "nccl-alltoall/r0/8-ranks-ep-0..ep-3" {
		t.Errorf("NCCL job IDs = %q, want [nccl-alltoall/r0/8-ranks-ep-0..ep-3] (4 pods of 2 GPUs)", ids)
	}
}

// fourGPUs stands for a 4-GPU host where a shipped scenario says gpus: all,
// so that the golden plans do not depend on the machine running the tests.
func fourGPUs() (int, string) { return 4, "nvidia-smi -L" }
