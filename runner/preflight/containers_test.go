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

// containerShells is a kube-like backend (its endpoints are pods) whose
// pods' containers are shells on this host, each with a PATH of its own
// (a folder per container): what a container's image has is what its
// folder has.
type containerShells struct {
	paths map[string]string // container ("" tools) → PATH
}

func (b *containerShells) Name() string     { return scenarios.BackendKube }
func (b *containerShells) RunsInPods() bool { return true }
func (b *containerShells) Provision(_ context.Context, eps []endpoint.Endpoint) ([]endpoint.Endpoint, error) {
	return eps, nil
}
func (b *containerShells) Start(context.Context, endpoint.Endpoint, backend.Command) (backend.Process, error) {
	panic("not started in this test")
}
func (b *containerShells) Cleanup(context.Context) error { return nil }
func (b *containerShells) Exec(ctx context.Context, ep endpoint.Endpoint, argv []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + b.paths[ep.Container]}
	return cmd.Output()
}

// Preflight probes each tool where it runs: nixlbench in the nixl
// container, whose image here lacks it; the failure names the image, the
// container and the key, and dooms the nixlbench test only.
func TestPreflightProbesEachToolInItsContainer(t *testing.T) {
	sc, err := scenarios.LoadBytes("images.yaml", []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: images}
backend: kube
cluster:
  image: tools:1
  images: {nixl: serving:1}
pools:
  - name: prefill
  - name: decode
tests:
  - {name: kv, tool: nixlbench, from: decode, to: prefill, args: {transports: tcp}}
  - {name: tcp, tool: iperf3, from: decode, to: prefill}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(sc, plan.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The tools container has iperf3 (a stub), the nixl one has none of it.
	dir := t.TempDir()
	toolsBin, nixlBin := filepath.Join(dir, "tools"), filepath.Join(dir, "nixl")
	for _, d := range []string{toolsBin, nixlBin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(toolsBin, "iperf3"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sys := "/usr/bin:/bin"
	be := &containerShells{paths: map[string]string{"": toolsBin + ":" + sys, "nixl": nixlBin + ":" + sys}}
	out, _ := RunWith(context.Background(), be, p, sc, p.Endpoints, Options{})
	for _, ep := range out {
		var nixl, iperf *schema.PreflightCheck
		for i, c := range ep.Checks {
			switch c.ID {
			case "binary-nixlbench":
				nixl = &ep.Checks[i]
			case "binary-iperf3":
				iperf = &ep.Checks[i]
			}
		}
		if nixl == nil || iperf == nil {
			t.Fatalf("%s: checks %+v", ep.Endpoint, ep.Checks)
		}
		if nixl.Status != schema.PreflightFail || nixl.Container != "nixl" ||
			!strings.HasPrefix(nixl.Evidence, "image serving:1 (container nixl): nixlbench is not on PATH") ||
			!strings.Contains(nixl.Fix, "cluster.images.nixl") {
			t.Errorf("%s: nixlbench check %+v", ep.Endpoint, nixl)
		}
		if iperf.Status != schema.PreflightPass || iperf.Container != "" {
			t.Errorf("%s: iperf3 check %+v: found in the tools container", ep.Endpoint, iperf)
		}
		// The nixl container's failure dooms what runs there, not the
		// tools container's tests.
		if _, doomed := Doomed(ep, Needs{Probes: []string{"binary-nixlbench"}, Container: "nixl"}); !doomed {
			t.Errorf("%s: nixlbench not doomed", ep.Endpoint)
		}
		if c, doomed := Doomed(ep, Needs{Probes: []string{"binary-nixlbench", "binary-iperf3"}}); doomed {
			t.Errorf("%s: a tools-container test doomed by %+v", ep.Endpoint, c)
		}
	}
}
