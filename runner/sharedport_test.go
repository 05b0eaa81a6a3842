package runner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// TestSharedPorts: a perNode pool's two pods on one node with VFs of one
// PF share its port; pods of another node, or one port each, do not; the
// local backend (no node, no host) never does.
func TestSharedPorts(t *testing.T) {
	pf := "PCI 0000:3b:00.0 port 1"
	eps := []endpoint.Endpoint{
		{Name: "decode-0", Node: "a", NICPort: pf}, {Name: "decode-1", Node: "a", NICPort: pf},
		{Name: "decode-2", Node: "b", NICPort: pf}, {Name: "decode-3", Node: "b", NICPort: "PCI 0000:5e:00.0 port 1"},
		{Name: "prefill-0", NICPort: pf}, {Name: "prefill-1", NICPort: pf},
	}
	want := []schema.SharedPort{{Machine: "a", Port: pf, Endpoints: []string{"decode-0", "decode-1"}}}
	if got := sharedPorts(eps); !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// TestSharedPortNotes: in a round where decode-0 → prefill-0 and decode-1
// → prefill-1 run at once, both jobs say decode-0 and decode-1 shared
// node a's port; a round with one of them, a skipped other, or the pair
// in one job (the same machine: noted as such) says nothing.
func TestSharedPortNotes(t *testing.T) {
	groups := []schema.SharedPort{{Machine: "a", Port: "PCI 0000:3b:00.0 port 1", Endpoints: []string{"decode-0", "decode-1"}}}
	job := func(id, from, to string) plan.Job {
		return plan.Job{ID: id, Legs: []plan.Leg{{From: from, To: to}}}
	}
	never := func(*plan.Job) bool { return false }
	round := []plan.Job{job("j0", "decode-0", "prefill-0"), job("j1", "decode-1", "prefill-1"), job("j2", "decode-2", "prefill-2")}
	notes := sharedPortNotes(groups, round, never)
	if len(notes) != 2 || notes["j2"] != "" {
		t.Fatalf("notes %v", notes)
	}
	if n := notes["j0"]; !strings.HasPrefix(n, "decode-0 sent on the NIC port PCI 0000:3b:00.0 port 1 of a that decode-1 used in the same round") ||
		!strings.HasSuffix(n, "a share of that port's line rate") {
		t.Errorf("j0: %q", n)
	}
	if notes := sharedPortNotes(groups, round, func(j *plan.Job) bool { return j.ID == "j1" }); len(notes) != 0 {
		t.Errorf("the other job skipped: %v", notes)
	}
	if notes := sharedPortNotes(groups, round[:1], never); len(notes) != 0 {
		t.Errorf("one job: %v", notes)
	}
	if notes := sharedPortNotes(groups, []plan.Job{job("j0", "decode-0", "decode-1"), job("j2", "decode-2", "prefill-2")}, never); len(notes) != 0 {
		t.Errorf("the pair in one job: %v", notes)
	}
	if notes := sharedPortNotes(nil, round, never); notes != nil {
		t.Errorf("no groups: %v", notes)
	}
}
