package pathproof

import (
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// A leg on rail 1 is proved by the counters of each pod's rail-1 device,
// not its data device's; a pod without that rail's device leaves it
// unproved.
func TestRailLegProvedOnItsRail(t *testing.T) {
	eps := map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Device: "rxe0", Rails: []endpoint.Rail{{Device: "rxe0"}, {Device: "rxe1", Interface: "eth2"}}},
		"b-0": {Name: "b-0", Device: "rxe0", Rails: []endpoint.Rail{{Device: "rxe0"}, {Device: "rxe1", Interface: "eth2"}}},
	}
	leg := &plan.Leg{Rail: 1, Commands: []plan.PlannedCommand{{Endpoint: "b-0"}, {Endpoint: "a-0"}}}
	p := Run{Endpoints: eps}.Leg(nil, leg)
	if p == nil {
		t.Fatal("rail leg not proved")
	}
	for _, name := range []string{"a-0", "b-0"} {
		if d := proofDevice(p.r.Endpoints[name]); d != "rxe1" {
			t.Errorf("%s proved on %s, want rxe1", name, d)
		}
	}
	if eps["a-0"].Device != "rxe0" {
		t.Error("the run's endpoints were changed")
	}
	eps["a-0"] = endpoint.Endpoint{Name: "a-0", Device: "rxe0"}
	if p := (Run{Endpoints: eps}).Leg(nil, leg); p != nil {
		t.Error("a pod without rail 1 proved")
	}
}
