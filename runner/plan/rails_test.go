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
	for v, want := range map[string]string{"rail1/65536": "65536", "rail2": "", "65536": "65536", "UCX/65536": "UCX/65536", "": "",
		"rail0>rail1": "", "rail1>rail0/64": "64", "rail1>x/64": "rail1>x/64"} {
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

// rping's crossRails connects every rail of the client to every rail of
// the server: one leg per rail pair (railI>railJ), the client bound to its
// rail's address (-I), the server on its rail's; to a pod of one network,
// each of the client's rails to it. Without crossRails rping keeps one leg.
func TestCrossRailsEveryRailToEveryRemoteRail(t *testing.T) {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: rails}
backend: kube
cluster:
  image: tools:1
  networks: [rail-0, rail-1]
pools:
  - {name: a}
  - {name: b}
  - {name: c, networks: [rail-0]}
tests:
  - {name: x, tool: rping, from: a, to: b, args: {crossRails: true, count: 2}}
  - {name: one, tool: rping, from: a, to: c, args: {crossRails: true, count: 2}}
  - {name: plain, tool: rping, from: a, to: b, args: {count: 2}}
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
				peer := "-"
				if l.PeerRail != nil {
					peer = string(rune('0' + *l.PeerRail))
				}
				got = append(got, j.Test+":"+l.Variant+":"+peer+": "+strings.Join(l.Commands[0].Argv, " ")+" | "+strings.Join(l.Commands[1].Argv, " "))
			}
		}
	}
	want := []string{
		"x:rail0>rail0:0: rping -s -a ${addr:b-0} -p 7174 -v -C 2 | rping -c -I ${addr:a-0} -a ${addr:b-0} -p 7174 -v -C 2",
		"x:rail0>rail1:1: rping -s -a ${addr:b-0#1} -p 7174 -v -C 2 | rping -c -I ${addr:a-0} -a ${addr:b-0#1} -p 7174 -v -C 2",
		"x:rail1>rail0:0: rping -s -a ${addr:b-0} -p 7174 -v -C 2 | rping -c -I ${addr:a-0#1} -a ${addr:b-0} -p 7174 -v -C 2",
		"x:rail1>rail1:1: rping -s -a ${addr:b-0#1} -p 7174 -v -C 2 | rping -c -I ${addr:a-0#1} -a ${addr:b-0#1} -p 7174 -v -C 2",
		"one:rail0>rail0:0: rping -s -a ${addr:c-0} -p 7174 -v -C 2 | rping -c -I ${addr:a-0} -a ${addr:c-0} -p 7174 -v -C 2",
		"one:rail1>rail0:0: rping -s -a ${addr:c-0} -p 7174 -v -C 2 | rping -c -I ${addr:a-0#1} -a ${addr:c-0} -p 7174 -v -C 2",
		"plain::-: rping -s -a ${addr:b-0} -p 7174 -v -C 2 | rping -c -a ${addr:b-0} -p 7174 -v -C 2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("legs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if l := p.Rounds[0].Jobs[0].Legs[1]; l.RailOn("a-0") != 0 || l.RailOn("b-0") != 1 || !l.OnRails() {
		t.Errorf("rail0>rail1: RailOn a-0 %d, b-0 %d", l.RailOn("a-0"), l.RailOn("b-0"))
	}
	if l := p.Rounds[0].Jobs[0].Legs[0]; l.OnRails() {
		t.Error("rail0>rail0 is on the data network only")
	}
}

// An ssh host with rails (hosts[].rails) is multi-rail as a pod with
// several networks is: perftest per rail, rping crossRails per rail pair.
func TestSSHHostRails(t *testing.T) {
	doc := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: rails}
backend: ssh
hosts:
  - {name: h1, address: 127.0.0.1, port: 2201, dataAddress: 10.9.0.1, rails: [10.9.1.1]}
  - {name: h2, address: 127.0.0.1, port: 2202, dataAddress: 10.9.0.2, rails: [10.9.1.2]}
pools:
  - {name: s, hosts: [h1]}
  - {name: c, hosts: [h2]}
tests:
  - {name: x, tool: rping, from: c, to: s, args: {crossRails: true}}
  - {name: bw, tool: ib_write_bw, from: c, to: s}
`
	sc, err := scenarios.LoadBytes("rails.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := compileHeld(sc, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rails := p.Endpoints[0].Rails; len(rails) != 2 || rails[0].Address != "10.9.0.1" || rails[1].Address != "10.9.1.1" || rails[1].Network != "rails[0]" {
		t.Errorf("planned rails %+v", rails)
	}
	legs := map[string]int{}
	for _, r := range p.Rounds {
		for _, j := range r.Jobs {
			legs[j.Test] += len(j.Legs)
		}
	}
	if legs["x"] != 4 || legs["bw"] != 2 {
		t.Errorf("legs per test %v, want x 4 (2×2 rail pairs), bw 2 (rail i to rail i)", legs)
	}
}
