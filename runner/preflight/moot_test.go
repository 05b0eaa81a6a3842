package preflight

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// hostShells is a host backend (local-like: its endpoints are processes)
// whose shell has only the PATH given.
type hostShells struct {
	path string
}

func (b *hostShells) RunsInPods() bool { return false }
func (b *hostShells) Name() string     { return scenarios.BackendLocal }
func (b *hostShells) Provision(_ context.Context, eps []endpoint.Endpoint) ([]endpoint.Endpoint, error) {
	return eps, nil
}
func (b *hostShells) Start(context.Context, endpoint.Endpoint, backend.Command) (backend.Process, error) {
	panic("not started in this test")
}
func (b *hostShells) Cleanup(context.Context) error { return nil }
func (b *hostShells) Exec(ctx context.Context, _ endpoint.Endpoint, argv []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + b.path}
	return cmd.Output()
}

// hostWithout is a host backend whose PATH has stubs of bins and the
// system's folders, on a host with no RDMA device and no GPU.
func hostWithout(t *testing.T, bins ...string) *hostShells {
	t.Helper()
	if ents, _ := os.ReadDir("/sys/class/infiniband"); len(ents) > 0 {
		t.Skip("this host has an RDMA device")
	}
	if _, err := os.Stat("/dev/nvidia0"); err == nil {
		t.Skip("this host has a GPU")
	}
	dir := t.TempDir()
	for _, b := range bins {
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &hostShells{path: dir + ":/usr/bin:/bin"}
}

func preflightOf(t *testing.T, be *hostShells, text string) []schema.PreflightEndpoint {
	t.Helper()
	sc, err := scenarios.LoadBytes("s.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := RunWith(context.Background(), be, p, sc, p.Endpoints, Options{})
	return out
}

const loopbackLike = `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: lb}
backend: local
pools: [{name: a}, {name: b}]
tests:
  - {name: write-bw, tool: ib_write_bw, from: a, to: b}
  - {name: tcp, tool: iperf3, from: a, to: b}
`

// On a host with no RDMA device, ib_write_bw's test is skipped for that:
// its missing binary is said (skip), not a failure of its own, while the
// check of a test that would run (iperf3) counts.
func TestToolCheckOfADoomedTestIsNoFailure(t *testing.T) {
	out := preflightOf(t, hostWithout(t), loopbackLike)
	for _, ep := range out {
		m := byID(ep.Checks)
		if c := m[RDMADevice]; c.Status != schema.PreflightFail {
			t.Errorf("%s: rdma-device %+v", ep.Endpoint, c)
		}
		if c := m["binary-ib_write_bw"]; c.Status != schema.PreflightSkip || !strings.Contains(c.Evidence, "rdma-device") {
			t.Errorf("%s: binary-ib_write_bw %+v, want skip naming rdma-device", ep.Endpoint, c)
		}
		if c := m["binary-iperf3"]; c.Status == schema.PreflightSkip || c.Status == "" {
			t.Errorf("%s: binary-iperf3 %+v: its test would run, its check counts", ep.Endpoint, c)
		}
	}
}

// Every tool that would run is there: the only failure left is the
// missing device, the reason the RDMA test is skipped.
func TestNoRDMAHostFailsOnlyRDMADevice(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	out := preflightOf(t, hostWithout(t, "iperf3"), loopbackLike)
	for _, ep := range out {
		for _, c := range ep.Checks {
			if c.Status == schema.PreflightFail && c.ID != RDMADevice {
				t.Errorf("%s: %+v fails", ep.Endpoint, c)
			}
		}
	}
}
