package preflight

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// silentPods is a pod backend whose exec never answers (a node under CPU
// emulation, where starting a command in a container takes minutes).
type silentPods struct{}

func (silentPods) RunsInPods() bool { return true }
func (silentPods) Name() string     { return scenarios.BackendKube }
func (silentPods) Provision(_ context.Context, eps []endpoint.Endpoint) ([]endpoint.Endpoint, error) {
	return eps, nil
}
func (silentPods) Start(context.Context, endpoint.Endpoint, backend.Command) (backend.Process, error) {
	panic("not started in this test")
}
func (silentPods) Cleanup(context.Context) error { return nil }
func (silentPods) Exec(ctx context.Context, _ endpoint.Endpoint, _ []string) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func podScenario(cluster string) string {
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: pods}
backend: kube
cluster:
  image: example.com/tools:1
` + cluster + `pools: [{name: server}, {name: client}]
tests:
  - {name: sweep, tool: ib_write_bw, from: client, to: server, args: {sweep: true}}
  - {name: tcp, tool: iperf3, from: client, to: server}
`
}

// TestUnreadPodWithoutIPCLock: pods whose facts could not be read within
// the bound, made without IPC_LOCK (capabilities: []), doom their RDMA
// tests by the ipc-lock check, judged from the spec, and not their TCP
// test; the same pods with the default IPC_LOCK (or privileged) doom
// nothing, as before (only the error is said).
func TestUnreadPodWithoutIPCLock(t *testing.T) {
	for _, tc := range []struct {
		name, cluster string
		doomed        bool
		added         string
	}{
		{"capabilities: []", "  capabilities: []\n", true, "adds none"},
		{"capabilities: [SYS_RAWIO]", "  capabilities: [SYS_RAWIO]\n", true, "adds SYS_RAWIO"},
		{"default (IPC_LOCK)", "", false, ""},
		{"CAP_IPC_LOCK", "  capabilities: [CAP_IPC_LOCK]\n", false, ""},
		{"privileged", "  capabilities: []\n  privileged: true\n", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenarios.LoadBytes("s.yaml", []byte(podScenario(tc.cluster)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Compile(sc, plan.CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out, _ := RunWith(context.Background(), silentPods{}, p, sc, p.Endpoints, Options{Timeout: 20 * time.Millisecond})
			if len(out) != 2 {
				t.Fatalf("%d endpoints; want 2", len(out))
			}
			for _, ep := range out {
				if !strings.Contains(ep.Error, "no answer within 20ms (--preflight-timeout)") {
					t.Errorf("%s: error %q; want no answer within the bound", ep.Endpoint, ep.Error)
				}
				c, doomed := Doomed(ep, Needs{RDMA: true})
				if doomed != tc.doomed {
					t.Fatalf("%s: RDMA doomed %v by %+v; want %v", ep.Endpoint, doomed, c, tc.doomed)
				}
				if _, tcp := Doomed(ep, Needs{}); tcp {
					t.Errorf("%s: a TCP test is doomed; want only RDMA tests", ep.Endpoint)
				}
				if !doomed {
					continue
				}
				want := "the pod's spec drops every capability and " + tc.added + ": IPC_LOCK is not held, and the memlock limit could not be read (reading preflight facts on " + ep.Endpoint + ": no answer within 20ms"
				if c.ID != IPCLock || c.Status != schema.PreflightFail || !strings.HasPrefix(c.Evidence, want) ||
					!strings.HasSuffix(c.Evidence, "memory registration fails under any finite limit (a container runtime's default is 8 MiB)") ||
					c.Fix != fixIPCLock {
					t.Errorf("%s: %+v; want ipc-lock failed: %q…", ep.Endpoint, c, want)
				}
			}
		})
	}
}
