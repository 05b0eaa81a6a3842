package tools

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// TestGPUCopyCommand: one process on the from endpoint (decode, its GPU 1
// first), reading prefill's GPU 0, which decode sees as ordinal 1; the
// sizes and step as the test gives them.
func TestGPUCopyCommand(t *testing.T) {
	spec, _ := Lookup(tool.GPUCopy)
	test := &scenarios.Test{Name: "copy", Tool: tool.GPUCopy, Args: scenarios.Args{
		MinSize: scenarios.Size{Raw: "1MiB", Bytes: 1 << 20}, MaxSize: scenarios.Size{Raw: "1GiB", Bytes: 1 << 30}, StepFactor: 2}}
	decode := endpoint.Endpoint{Name: "decode-0", GPUs: 1, VisibleGPUs: "1,0,2,3"}
	prefill := endpoint.Endpoint{Name: "prefill-0", GPUs: 1, VisibleGPUs: "0,1,2,3"}
	cmds, err := Build(spec, Leg{Test: test, Client: decode, Server: prefill})
	if err != nil || len(cmds) != 1 {
		t.Fatalf("%v %+v", err, cmds)
	}
	c := cmds[0]
	want := "rdmabench-nccl --collective copy --device 0 --peer-device 1 -b 1048576 -e 1073741824 -f 2 -w 5 -c 1 --time-limit "
	if got := strings.Join(c.Argv, " "); !strings.HasPrefix(got, want) || c.Endpoint != "decode-0" || !c.Parse || c.Env["CUDA_VISIBLE_DEVICES"] != "1,0,2,3" {
		t.Errorf("%s on %s env %v, want %s…", got, c.Endpoint, c.Env, want)
	}
}

// TestPeerGPU: the to endpoint's first GPU, in the from endpoint's order.
func TestPeerGPU(t *testing.T) {
	for _, c := range []struct {
		from, to string
		fromGPUs int
		want     int
	}{
		{"1,0", "0,1", 1, 1},         // decode on 1 reads prefill on 0
		{"0,1", "1,0", 1, 1},         // prefill on 0 reads decode on 1
		{"2,3,0,1", "0,1,2,3", 2, 2}, // two GPUs each: prefill's first is decode's third
		{"0,1,2,3", "3,0,1,2", 1, 3},
		{"", "", 2, 2}, // no order given: the first GPU past from's own
	} {
		got := peerGPU(endpoint.Endpoint{GPUs: c.fromGPUs, VisibleGPUs: c.from}, endpoint.Endpoint{VisibleGPUs: c.to})
		if got != c.want {
			t.Errorf("from %q to %q: %d, want %d", c.from, c.to, got, c.want)
		}
	}
}

// TestGPUCopyRefusesTwoHosts: endpoints on two hosts (ssh) share no GPU;
// the first GPU past from's own is one of from's host, so the copy would
// time two GPUs of one host and report it as the pair across hosts.
func TestGPUCopyRefusesTwoHosts(t *testing.T) {
	spec, _ := Lookup(tool.GPUCopy)
	test := &scenarios.Test{Name: "copy", Tool: tool.GPUCopy}
	a := endpoint.Endpoint{Name: "decode-0", Host: "gpu-a", GPUs: 1}
	b := endpoint.Endpoint{Name: "prefill-0", Host: "gpu-b", GPUs: 1}
	if _, err := Build(spec, Leg{Test: test, Client: a, Server: b}); err == nil || !strings.Contains(err.Error(), "gpu-a") {
		t.Errorf("two hosts: %v", err)
	}
	b.Host = "gpu-a"
	if _, err := Build(spec, Leg{Test: test, Client: a, Server: b}); err != nil {
		t.Errorf("one host: %v", err)
	}
}
