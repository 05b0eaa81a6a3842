package runner

import (
	"reflect"
	"strings"
	"testing"
	"time"

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

// TestSharedPortNote: a leg is noted only for another job's leg that used
// a sibling endpoint of its port while it ran: not for one that ended
// before it started, not for one of its own job, not through a rail leg.
func TestSharedPortNote(t *testing.T) {
	groups := []schema.SharedPort{{Machine: "a", Port: "PCI 0000:3b:00.0 port 1", Endpoints: []string{"decode-0", "decode-1"}}}
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	leg := func(from, to string) *plan.Leg { return &plan.Leg{From: from, To: to} }
	if got := portUsers(groups, leg("decode-0", "prefill-0")); !reflect.DeepEqual(got, []string{"decode-0"}) {
		t.Errorf("users %v", got)
	}
	rail := 1
	if got := portUsers(groups, &plan.Leg{From: "decode-0", To: "prefill-0", Rail: rail}); got != nil {
		t.Errorf("a rail leg uses %v", got)
	}
	uses := []*portUse{
		{job: "j1", endpoints: []string{"decode-1"}, start: at(0), end: at(5)},  // overlaps 2..8
		{job: "j2", endpoints: []string{"decode-1"}, start: at(9), end: at(12)}, // after
		{job: "j0", endpoints: []string{"decode-1"}, start: at(0), end: at(10)}, // its own job
		{job: "j3", endpoints: []string{"decode-1"}, start: at(7)},              // still running
	}
	note := sharedPortNote(groups, uses, "j0", []string{"decode-0"}, at(2), at(8))
	if !strings.HasPrefix(note, "decode-0 sent on the NIC port PCI 0000:3b:00.0 port 1 of a that decode-1 used at the same time") ||
		!strings.HasSuffix(note, "a share of that port's line rate") {
		t.Errorf("note %q", note)
	}
	if note := sharedPortNote(groups, uses[1:3], "j0", []string{"decode-0"}, at(2), at(8)); note != "" {
		t.Errorf("no overlap with another job: %q", note)
	}
	if note := sharedPortNote(groups, uses, "j0", []string{"decode-0", "decode-1"}, at(2), at(8)); note != "" {
		t.Errorf("the pair in one leg (the same machine, noted as such): %q", note)
	}
}

// TestPortBusyRecordsTheEnd: portBusy's function closes the leg's time.
func TestPortBusyRecordsTheEnd(t *testing.T) {
	r := &run{}
	end := time.Now()
	r.portBusy("j", []string{"decode-0"}, end.Add(-time.Second))(end)
	if len(r.portUses) != 1 || !r.portUses[0].end.Equal(end) {
		t.Errorf("%+v", r.portUses)
	}
	r.portBusy("j", nil, end)(end)
	if len(r.portUses) != 1 {
		t.Error("a leg on no shared port is not recorded")
	}
}
