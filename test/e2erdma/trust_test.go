package e2erdma

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/exitcode"

	"github.com/rdmabench/rdmabench/report/schema"
)

// trustScenario is a soft-RoCE scenario for the preflight and path-proof
// tests: user logs in on both VMs, pools as given ("server: [vm1]"), and
// the tests' YAML.
func trustScenario(t *testing.T, user, pools, tests string) string {
	t.Helper()
	var hosts strings.Builder
	for _, vm := range pair.VMs {
		fmt.Fprintf(&hosts, "  - name: %s\n    address: 127.0.0.1\n    port: %d\n    user: %s\n    keyFile: %s\n    knownHostsFile: %s\n    dataAddress: %s\n",
			vm.Name, vm.SSHPort, user, pair.KeyFile, pair.KnownHosts, vm.DataIP)
	}
	doc := fmt.Sprintf(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: trust
backend: ssh
hosts:
%slineRate: auto
defaults:
  device: rxe0
  gidIndex: 1
  timeout: 90s
pools:
%s
tests:
%s`, hosts.String(), pools, tests)
	p := filepath.Join(t.TempDir(), "trust.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const twoPools = "  - name: server\n    hosts: [vm1]\n  - name: client\n    hosts: [vm2]"

const writeBW = `  - name: write-bw
    tool: ib_write_bw
    from: client
    to: server
    args:
      sizes: [64KiB]
      iterations: 100
`

// rdmabench runs the binary and returns its exit code, stdout and stderr.
func rdmabench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return rdmabenchWithin(t, 5*time.Minute, args...)
}

// rdmabenchWithin is rdmabench killed after bound (a run that should stop
// itself first is given a shorter --timeout: it then keeps its report).
func rdmabenchWithin(t *testing.T, bound time.Duration, args ...string) (int, string, string) {
	t.Helper()
	bin := filepath.Join(repoRoot, "bin", "rdmabench")
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = repoRoot
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("rdmabench %s: %v", strings.Join(args, " "), err)
	}
	return code, stdout.String(), stderr.String()
}

// vmSh runs a shell line as root on VM i (0 or 1).
func vmSh(t *testing.T, i int, line string) {
	t.Helper()
	b, eps := newBackend(t)
	out, err := b.Exec(timeout(t, time.Minute), eps[i], []string{"sh", "-c", line})
	if err != nil {
		t.Fatalf("%s: %s: %v (%s)", eps[i].Name, line, err, out)
	}
}

// preflightJSON runs `rdmabench preflight -o json` and returns its exit
// code and the checks by endpoint and id.
func preflightJSON(t *testing.T, scenario string) (int, map[string]map[string]schema.PreflightCheck) {
	t.Helper()
	code, stdout, stderr := rdmabench(t, "preflight", scenario, "-o", "json")
	var doc struct {
		Preflight []schema.PreflightEndpoint `json:"preflight"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("preflight -o json (exit %d): %v\n%s\n%s", code, err, stdout, stderr)
	}
	m := map[string]map[string]schema.PreflightCheck{}
	for _, ep := range doc.Preflight {
		m[ep.Endpoint] = map[string]schema.PreflightCheck{}
		for _, c := range ep.Checks {
			m[ep.Endpoint][c.ID] = c
		}
	}
	return code, m
}

// runReport runs a scenario and loads its report.
func runReport(t *testing.T, scenario string) (int, *schema.Report) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := rdmabench(t, "run", scenario, "--out", out, "--html", "none")
	t.Logf("rdmabench run (exit %d):\n%s", code, stderr)
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	return code, rep
}

// TestPreflightOnVMs: every check passes on the healthy VMs; then each
// break is named by its check, and the RDMA test is skipped with the
// check's name instead of running.
func TestPreflightOnVMs(t *testing.T) {
	needDataLink(t)
	sc := trustScenario(t, "root", twoPools, writeBW)
	code, checks := preflightJSON(t, sc)
	if code != 0 {
		t.Fatalf("healthy VMs: preflight exit %d: %+v", code, checks)
	}
	for _, ep := range []string{"server-0", "client-0"} {
		for _, id := range []string{"rdma-device", "port-active", "link-layer", "dev-infiniband", "memlock", "ipc-lock", "mtu-match", "roce-gid", "pcie-link"} {
			if c := checks[ep][id]; c.Status != schema.PreflightPass {
				t.Errorf("%s %s: %+v", ep, id, c)
			}
		}
	}

	t.Run("mtu-mismatch", func(t *testing.T) {
		vmSh(t, 1, "ip link set eth0 mtu 1500")
		defer vmSh(t, 1, "ip link set eth0 mtu 4200")
		code, checks := preflightJSON(t, sc)
		c := checks["server-0"]["mtu-match"]
		if code != 1 || c.Status != schema.PreflightFail || !strings.Contains(c.Evidence, "client-0 has active IB MTU 1024 (netdev MTU 1500)") {
			t.Fatalf("exit %d, server-0 mtu-match %+v", code, c)
		}
		t.Logf("mtu-match: %s", c.Evidence)
		assertSkipped(t, sc, "preflight mtu-match: ")
	})

	t.Run("port-down", func(t *testing.T) {
		vmSh(t, 1, "ip link set eth0 down")
		defer vmSh(t, 1, "ip link set eth0 up")
		code, checks := preflightJSON(t, sc)
		c := checks["client-0"]["port-active"]
		if code != 1 || c.Status != schema.PreflightFail || !strings.Contains(c.Evidence, "rxe0 port 1: state DOWN") {
			t.Fatalf("exit %d, client-0 port-active %+v", code, c)
		}
		assertSkipped(t, sc, "preflight port-active: ")
	})

	t.Run("low-memlock", func(t *testing.T) {
		// A user without CAP_IPC_LOCK, under dropbear's memlock limit
		// (8 MiB): ib_write_bw -a fails with "Couldn't allocate MR" there.
		for i := range 2 {
			vmSh(t, i, `grep -q ^bench: /etc/passwd || echo "bench:x:1000:1000::/home/bench:/bin/sh" >> /etc/passwd
mkdir -p /home/bench/.ssh && cp /root/.ssh/authorized_keys /home/bench/.ssh/ && chown -R 1000:1000 /home/bench && chmod 700 /home/bench/.ssh`)
		}
		// The -a sweep pins 2 × 8 MiB: more than the limit (64 KiB messages would fit).
		sweep := strings.Replace(writeBW, "sizes: [64KiB]\n      iterations: 100", "sweep: true\n      iterations: 5", 1)
		if sweep == writeBW {
			t.Fatal("the sweep test was not made")
		}
		sc := trustScenario(t, "bench", twoPools, sweep)
		code, checks := preflightJSON(t, sc)
		c := checks["client-0"]["memlock"]
		if code != 1 || c.Status != schema.PreflightFail || !strings.Contains(c.Evidence, "ulimit -l 8192 KiB") || !strings.Contains(c.Evidence, "CAP_IPC_LOCK is not held") {
			t.Fatalf("exit %d, client-0 memlock %+v", code, c)
		}
		if ipc := checks["client-0"]["ipc-lock"]; ipc.Status != schema.PreflightWarn {
			t.Errorf("ipc-lock for a non-root user on a host: %+v", ipc)
		}
		assertSkipped(t, sc, "preflight memlock: ")
	})
}

// assertSkipped runs the scenario: its one RDMA test must be skipped with
// the reason starting with prefix, and the run, having measured nothing,
// exits NothingMeasured.
func assertSkipped(t *testing.T, sc, prefix string) {
	t.Helper()
	code, rep := runReport(t, sc)
	if code != exitcode.NothingMeasured || len(rep.Results) != 1 {
		t.Fatalf("exit %d, %d results", code, len(rep.Results))
	}
	r := rep.Results[0]
	if r.Verdict != schema.VerdictSkipped || !strings.HasPrefix(r.Reason, prefix) {
		t.Fatalf("verdict %s, reason %q; want skipped with %q", r.Verdict, r.Reason, prefix)
	}
	if len(rep.Preflight) != 2 {
		t.Errorf("report.json preflight: %d endpoints", len(rep.Preflight))
	}
}

// TestPathInvalidOnVMs: traffic forced off the device the test names is
// invalid, with the counter figures as the reason: ib_write_bw made to use
// another rxe device (rxemgmt on vm1's management NIC, made for this test;
// rxe1, the second rail, is the image's) while the scenario names rxe0,
// and UCX's UCT test moved onto TCP where rc_verbs on rxe0 is configured.
func TestPathInvalidOnVMs(t *testing.T) {
	needDataLink(t)
	vmSh(t, 0, "rdma link show rxemgmt >/dev/null 2>&1 || rdma link add rxemgmt type rxe netdev eth1")
	defer vmSh(t, 0, "rdma link delete rxemgmt")
	oneHost := "  - name: server\n    hosts: [vm1]\n  - name: client\n    hosts: [vm1]"
	wrongNIC := `  - name: wrong-nic
    tool: ib_write_bw
    from: client
    to: server
    args:
      sizes: [64KiB]
      iterations: 100
      extra: ["-d", "rxemgmt"]
`
	code, rep := runReport(t, trustScenario(t, "root", oneHost, wrongNIC))
	if code != 1 || len(rep.Results) != 1 {
		t.Fatalf("exit %d, %d results; want exit 1 and one result", code, len(rep.Results))
	}
	r := rep.Results[0]
	if r.Verdict != schema.VerdictInvalid || r.Path == nil || !r.Path.Invalid || !strings.Contains(r.Reason, "did not cross rxe0") || r.BestBps <= 0 {
		t.Fatalf("wrong-nic: verdict %s reason %q path %+v", r.Verdict, r.Reason, r.Path)
	}
	t.Logf("wrong-nic: %s", r.Reason)

	// UCX held to rc_verbs on rxe0 by the scenario (UCX_TLS, UCX_NET_DEVICES),
	// its UCT test moved onto TCP over eth0 by arguments: the configured
	// transport says RDMA, the counters say otherwise.
	tcp := `  - name: uct-tcp-not-rdma
    tool: ucx_perftest
    from: client
    to: server
    args:
      test: put_bw
      transports: rc_verbs
      sizes: [64KiB]
      iterations: 300
      extra: ["-d", "eth0", "-x", "tcp", "-t", "am_bw", "-D", "zcopy"]
`
	code, rep = runReport(t, trustScenario(t, "root", twoPools, tcp))
	if code != 1 || len(rep.Results) != 1 {
		t.Fatalf("exit %d, %d results", code, len(rep.Results))
	}
	r = rep.Results[0]
	if r.Verdict != schema.VerdictInvalid || !strings.Contains(r.Reason, "did not cross rxe0") || r.BestBps <= 0 {
		t.Fatalf("uct over tcp: verdict %s reason %q", r.Verdict, r.Reason)
	}
	t.Logf("uct over tcp (%.0f Mb/s measured): %s", r.BestBps/1e6, r.Reason)
}
