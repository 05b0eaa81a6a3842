package tools

import (
	"slices"
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// railed is a pod whose devices are found at run time, on two networks:
// two rails.
func railed(name string, nets ...string) endpoint.Endpoint {
	return endpoint.Endpoint{Name: name, GPUs: 1, ResolveDevice: true,
		Placement: &endpoint.Placement{Networks: nets}}
}

// A pod with several secondary networks gives NCCL every rail: its data
// device, then the others' (the ${rails:…} placeholder, filled once the
// pod runs); a pod with one network stays as it was.
func TestNCCLGetsEveryRail(t *testing.T) {
	ranks := []endpoint.Endpoint{railed("a-0", "rail-0", "rail-1"), railed("b-0", "rail-0", "rail-1")}
	cmds := build(t, scenarios.Test{Tool: "nccl"}, Leg{Client: ranks[0], Server: ranks[0], Ranks: ranks})
	want := "=${dev:a-0}:${port:a-0}${rails:a-0},${dev:b-0}:${port:b-0}${rails:b-0}"
	if got := cmds[0].Env["NCCL_IB_HCA"]; got != want {
		t.Errorf("NCCL_IB_HCA %q, want %q", got, want)
	}
	ranks = []endpoint.Endpoint{railed("a-0", "rail-0"), railed("b-0", "rail-0")}
	cmds = build(t, scenarios.Test{Tool: "nccl"}, Leg{Client: ranks[0], Server: ranks[0], Ranks: ranks})
	if got := cmds[0].Env["NCCL_IB_HCA"]; got != "=${dev:a-0}:${port:a-0},${dev:b-0}:${port:b-0}" {
		t.Errorf("one network: NCCL_IB_HCA %q", got)
	}
}

// UCX is given every rail of a multi-rail pod (UCX_NET_DEVICES is a list).
func TestUCXGetsEveryRail(t *testing.T) {
	test := scenarios.Test{Tool: "ucx_perftest", Args: scenarios.Args{Transports: "rc,self"}}
	cmds := build(t, test, Leg{Client: railed("a-0", "r0", "r1"), Server: railed("b-0", "r0")})
	if got := cmds[1].Env["UCX_NET_DEVICES"]; got != "${dev:a-0}:${port:a-0}${rails:a-0}" {
		t.Errorf("client UCX_NET_DEVICES %q", got)
	}
	if got := cmds[0].Env["UCX_NET_DEVICES"]; got != "${dev:b-0}:${port:b-0}" {
		t.Errorf("server UCX_NET_DEVICES %q", got)
	}
}

// A perftest leg on rail 1 names each side's rail-1 device, port and GID
// and connects to the server's rail-1 address.
func TestPerftestOnARail(t *testing.T) {
	test := scenarios.Test{Tool: "ib_write_bw"}
	cmds := build(t, test, Leg{Client: railed("a-0", "r0", "r1"), Server: railed("b-0", "r0", "r1"), Rail: 1})
	check(t, cmds,
		expect{endpoint: "b-0", role: RoleServer, port: 18515, ready: "listen",
			argv: "ib_write_bw -d ${dev:b-0#1} -i ${port:b-0#1} -x ${gid:b-0#1} -F --report_gbits -p 18515"},
		expect{endpoint: "a-0", role: RoleClient, parse: true,
			argv: "ib_write_bw -d ${dev:a-0#1} -i ${port:a-0#1} -x ${gid:a-0#1} -F --report_gbits -p 18515 ${addr:b-0#1}"})
	if !PerRail(test.Tool) || PerRail("nccl") {
		t.Error("perftest measures each rail; nccl is given every rail at once")
	}
}

// NCCL through Google's gIB plugin (NCCL_NET=gIB, set by the scenario as
// its env script does) picks its own NICs and GID: rdmabench names none.
func TestNCCLLeavesGIBAlone(t *testing.T) {
	ranks := []endpoint.Endpoint{railed("a-0", "rdma-0", "rdma-1"), railed("b-0", "rdma-0", "rdma-1")}
	env := func(string) map[string]string { return map[string]string{"NCCL_NET": "gIB"} }
	cmds := build(t, scenarios.Test{Tool: "nccl"}, Leg{Client: ranks[0], Server: ranks[0], Ranks: ranks, EnvFor: env})
	for _, k := range []string{"NCCL_IB_HCA", "NCCL_IB_GID_INDEX"} {
		if v, set := cmds[0].Env[k]; set {
			t.Errorf("%s=%s set under gIB", k, v)
		}
	}
	if !UsesGIB(map[string]string{"NCCL_NET": "gib"}) || UsesGIB(map[string]string{"NCCL_NET": "IB"}) || UsesGIB(nil) {
		t.Error("UsesGIB")
	}
}

// A GPU process of a multi-rail pod is given its GPU's nearest NIC as
// UCX_NET_DEVICES (the ${nic:…} placeholder, filled from the pod's
// nvidia-smi topo -m once it runs), not the pod's first rail or every
// rail: the NIXL probe's and nixlbench's VRAM sides use GPU 0, each NCCL
// probe rank its own GPU. A DRAM side, and a pod of one network, keep
// what they had.
func TestUCXNearestNICOfEachGPU(t *testing.T) {
	a, b := railed("a-0", "r0", "r1"), railed("b-0", "r0", "r1")
	nixl := scenarios.Test{Tool: "nixl_probe", Args: scenarios.Args{InitiatorSeg: "VRAM", TargetSeg: "DRAM"}}
	cmds := build(t, nixl, Leg{Client: a, Server: b})
	for _, c := range cmds {
		want := map[string]string{"a-0": "${nic:a-0@0}", "b-0": "${dev:b-0}:${port:b-0}${rails:b-0}"}[c.Endpoint]
		if got := c.Env["UCX_NET_DEVICES"]; got != want {
			t.Errorf("nixl_probe %s (%s): UCX_NET_DEVICES %q, want %q", c.Endpoint, c.Role, got, want)
		}
	}
	bench := scenarios.Test{Tool: "nixlbench", Args: scenarios.Args{InitiatorSeg: "VRAM", TargetSeg: "VRAM"}}
	for _, c := range build(t, bench, Leg{Client: a, Server: b}) {
		if got, want := c.Env["UCX_NET_DEVICES"], "${nic:"+c.Endpoint+"@0}"; got != want {
			t.Errorf("nixlbench %s: UCX_NET_DEVICES %q, want %q", c.Endpoint, got, want)
		}
	}
	two := railed("c-0", "r0", "r1", "r2", "r3")
	two.GPUs = 2
	ranks := []endpoint.Endpoint{two, railed("d-0", "r0")}
	var got []string
	for _, c := range build(t, scenarios.Test{Tool: "nccl_probe"}, Leg{Client: ranks[0], Server: ranks[0], Ranks: ranks}) {
		got = append(got, c.Endpoint+"="+c.Env["UCX_NET_DEVICES"])
	}
	if want := []string{"c-0=${nic:c-0@0}", "c-0=${nic:c-0@1}", "d-0="}; !slices.Equal(got, want) {
		t.Errorf("nccl_probe ranks' UCX_NET_DEVICES %q, want %q", got, want)
	}
}
