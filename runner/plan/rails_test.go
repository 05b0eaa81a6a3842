package plan

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/scenarios"
)

// Pods on several networks are measured rail i to rail i by perftest (one
// leg per rail after the data network's), while NCCL gets every rail in
// one leg; one network keeps one leg.
func TestPerftestMeasuresEachRail(t *testing.T) {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: rails}
backend: kube
cluster:
  image: tools:1
  networks: [rail-0, rail-1, rail-2]
pools:
  - {name: a}
  - {name: b}
  - {name: c, networks: [rail-0]}
tests:
  - {name: bw, tool: ib_write_bw, from: a, to: b, args: {sizes: [64KiB]}}
  - {name: one, tool: ib_write_bw, from: a, to: c}
`
	sc, err := scenarios.LoadBytes("rails.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := compileHeld(sc, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Rounds {
		for _, j := range r.Jobs {
			for _, l := range j.Legs {
				got = append(got, j.Test+":"+l.Variant+":"+strings.Join(l.Commands[1].Argv, " "))
			}
		}
	}
	want := []string{
		"bw:65536:ib_write_bw -d ${dev:a-0} -i ${port:a-0} -x ${gid:a-0} -s 65536 -F --report_gbits -p 18515 ${addr:b-0}",
		"bw:rail1/65536:ib_write_bw -d ${dev:a-0#1} -i ${port:a-0#1} -x ${gid:a-0#1} -s 65536 -F --report_gbits -p 18515 ${addr:b-0#1}",
		"bw:rail2/65536:ib_write_bw -d ${dev:a-0#2} -i ${port:a-0#2} -x ${gid:a-0#2} -s 65536 -F --report_gbits -p 18515 ${addr:b-0#2}",
		"one::ib_write_bw -d ${dev:a-0} -i ${port:a-0} -x ${gid:a-0} -F --report_gbits -p 18515 ${addr:c-0}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("legs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A rail leg's variant keeps the size the runner reads from it.
func TestRailVariantKeepsTheSize(t *testing.T) {
	for v, want := range map[string]string{"rail1/65536": "65536", "rail2": "", "65536": "65536", "UCX/65536": "UCX/65536", "": ""} {
		if got := WithoutRail(v); got != want {
			t.Errorf("WithoutRail(%q) = %q, want %q", v, got, want)
		}
	}
	if railVariant(1, "65536") != "rail1/65536" || railVariant(0, "x") != "x" || railVariant(3, "") != "rail3" {
		t.Error("railVariant")
	}
}

// NCCL between multi-rail pods is given every rail in one leg; under
// Google's gIB plugin (NCCL_NET=gIB in the scenario's env) none.
func TestNCCLRailsAndGIBInThePlan(t *testing.T) {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: rails}
backend: kube
cluster:
  image: tools:1
  networks: [rail-0, rail-1]
pools:
  - {name: a, gpus: 1}
  - {name: b, gpus: 1}
tests:
  - {name: ar, tool: nccl, from: a, to: b, args: {collective: all_reduce}}
  - {name: gib, tool: nccl, from: a, to: b, args: {collective: all_reduce}, env: {NCCL_NET: gIB}}
`
	sc, err := scenarios.LoadBytes("rails.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := compileHeld(sc, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range p.Rounds {
		for _, j := range r.Jobs {
			if len(j.Legs) != 1 {
				t.Errorf("%s: %d legs, want 1", j.ID, len(j.Legs))
			}
			got[j.Test] = j.Legs[0].Commands[0].Env["NCCL_IB_HCA"]
		}
	}
	if got["ar"] != "=${dev:a-0}:${port:a-0}${rails:a-0},${dev:b-0}:${port:b-0}${rails:b-0}" || got["gib"] != "" {
		t.Errorf("NCCL_IB_HCA %q", got)
	}
}
