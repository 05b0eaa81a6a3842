package runner

import (
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// ${rails:…} becomes the pod's other rails with an RDMA device, each as
// ",dev:port" (a rail without one is left out, not the whole list); a
// pod whose rails were not found gives "" (its data device alone).
func TestSubstituteRails(t *testing.T) {
	gid := 1
	eps := map[string]endpoint.Endpoint{
		"a-0": {Name: "a-0", Device: "rxe0", Port: 1, GIDIndex: &gid, Rails: []endpoint.Rail{
			{Network: "r0", Device: "rxe0", Port: 1}, {Network: "r1", Device: "rxe1", Port: 1},
			{Network: "r2", NoDevice: "no RDMA device serves net3"}, {Network: "r3", Device: "mlx5_3"}}},
		"b-0": {Name: "b-0", Device: "rxe0", Port: 1, GIDIndex: &gid},
	}
	s := newSubstituter(eps, "", "r", "/o")
	_, env, err := s.command(plan.PlannedCommand{Env: map[string]string{
		"NCCL_IB_HCA": "=${dev:a-0}:${port:a-0}${rails:a-0},${dev:b-0}:${port:b-0}${rails:b-0}"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := env["NCCL_IB_HCA"], "=rxe0:1,rxe1:1,mlx5_3:1,rxe0:1"; got != want {
		t.Errorf("NCCL_IB_HCA %q, want %q", got, want)
	}
}
