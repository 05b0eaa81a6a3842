package e2erdma

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
)

// crossRailScenario is a pair's VMs as ssh hosts with both rails (rail 0
// the data network's rxe0, rail 1 the second rail's rxe1) and an rping
// from vm2 to vm1 from every rail to every remote rail (crossRails).
func crossRailScenario(p *Pair) string {
	var hosts strings.Builder
	for _, vm := range p.VMs {
		fmt.Fprintf(&hosts, "  - {name: %s, address: 127.0.0.1, port: %d, user: root, keyFile: %s, knownHostsFile: %s, dataAddress: %s, rails: [%s]}\n",
			vm.Name, vm.SSHPort, p.KeyFile, p.KnownHosts, vm.DataIP, vm.RailIP)
	}
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: softroce-cross-rails
backend: ssh
hosts:
` + hosts.String() + `pools:
  - {name: server, hosts: [vm1]}
  - {name: client, hosts: [vm2]}
tests:
  - name: cross-rails
    tool: rping
    from: client
    to: server
    timeout: 20s
    args:
      crossRails: true
      count: 2
`
}

// runCrossRails runs `rdmabench run` on crossRailScenario and returns its
// exit code, report and terminal summary.
func runCrossRails(t *testing.T, p *Pair) (int, *schema.Report, string) {
	t.Helper()
	scenario := filepath.Join(t.TempDir(), "cross-rails.yaml")
	if err := os.WriteFile(scenario, []byte(crossRailScenario(p)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "bin", "rdmabench"), "run", scenario, "--out", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("rdmabench run: exit %d\n%s\n%s", code, stderr.String(), stdout.String())
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !bytes.Contains(html, []byte("Every expert can cross")) {
		t.Errorf("report.html lacks the rail reachability section (%v)", err)
	}
	return code, rep, stdout.String()
}

// reach is the run's one rail reachability, checked for its shape.
func reach(t *testing.T, rep *schema.Report) schema.RailReach {
	t.Helper()
	if len(rep.RailReach) != 1 || len(rep.RailReach[0].Pairs) != 4 {
		t.Fatalf("railReach %+v; want one analysis of 4 rail pairs", rep.RailReach)
	}
	for _, ep := range rep.Endpoints {
		if len(ep.Rails) != 2 || ep.Rails[0].Device != "rxe0" || ep.Rails[1].Device != "rxe1" {
			t.Fatalf("endpoint %s rails %+v; want rxe0 and rxe1 found from their addresses", ep.Name, ep.Rails)
		}
	}
	return rep.RailReach[0]
}

func blockedPairs(a schema.RailReach) []string {
	var out []string
	for _, p := range a.Blocked {
		out = append(out, p.Name())
	}
	return out
}

// TestCrossRailsOnSeparateCables: the lane's VMs have each rail on a cable
// of its own (two point-to-point networks, no switch between them): a
// rail-only fabric by construction. rping connects rail i to remote rail i
// and not across; rdmabench says "not WideEP-ready", names both cross
// pairs, calls the fabric rail-only, and gives DeepEP one rail.
func TestCrossRailsOnSeparateCables(t *testing.T) {
	needVMs(t)
	if pair.VMs[0].RailIP == "" {
		t.Skip("the VMs have no second rail")
	}
	code, rep, stdout := runCrossRails(t, pair)
	a := reach(t, rep)
	want := []string{"client-0 rail0 (rxe0) → server-0 rail1 (rxe1)", "client-0 rail1 (rxe1) → server-0 rail0 (rxe0)"}
	if code == 0 || a.Verdict != schema.NotWideEPReady || !a.RailOnly || strings.Join(blockedPairs(a), "; ") != strings.Join(want, "; ") {
		t.Fatalf("exit %d, %s, rail-only %v, blocked %q; want not WideEP-ready, rail-only, blocked %q", code, a.Verdict, a.RailOnly, blockedPairs(a), want)
	}
	if !strings.Contains(stdout, "rail-only fabric") || !strings.Contains(stdout, "NCCL_CROSS_NIC=0") {
		t.Errorf("terminal lacks the rail-only finding or NCCL_CROSS_NIC=0")
	}
}

// TestCrossRailsThroughASwitch: a second VM pair whose four RDMA NICs share
// one network segment, as a fabric that routes any rail to any rail: each
// NIC has a route to the other rail's subnet (RDMA CM looks the peer up
// through the bound NIC, and the listener checks the way back through its
// own) and answers ARP only for its own address, rp_filter off. Every rail reaches every remote rail: WideEP-ready, exit 0, and
// the settings name both rails. Then a rail-only route is planted for one
// pair: vm1's rail 1 answers only its own subnet (arp_ignore 2), so vm2's
// rail 0 cannot reach it while vm2's rail 1 still can: not WideEP-ready,
// naming exactly that pair, and DeepEP is given the rail that still
// reaches every remote rail.
func TestCrossRailsThroughASwitch(t *testing.T) {
	needVMs(t)
	cfg := DefaultConfig(os.Getenv("RDMABENCH_SOFTROCE"))
	cfg.SSHPorts, cfg.KubeletPorts, cfg.SocketPort, cfg.RailPort = [2]int{42221, 42222}, [2]int{42261, 42262}, 42230, 0
	cfg.RailSwitch, cfg.MemoryMiB = true, 1024
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	sw, err := Boot(ctx, cfg)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	t.Logf("switch pair up in %.1fs", sw.BootTime.Seconds())
	for _, vm := range sw.VMs {
		data, rail := ifaceOf(t, sw, vm, vm.DataIP), ifaceOf(t, sw, vm, vm.RailIP)
		swRun(t, sw, vm, "for f in /proc/sys/net/ipv4/conf/*/arp_ignore; do echo 1 > $f; done; "+
			"for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 > $f; done; "+
			"/sbin/ip route add 10.9.1.0/24 dev "+data+" metric 100; /sbin/ip route add 10.9.0.0/24 dev "+rail+" metric 100; /sbin/ip neigh flush all")
	}

	code, rep, stdout := runCrossRails(t, sw)
	a := reach(t, rep)
	if code != 0 || a.Verdict != schema.WideEPReady || len(a.Blocked) != 0 {
		t.Fatalf("any-to-any: exit %d, %s, blocked %q; want 0, WideEP-ready", code, a.Verdict, blockedPairs(a))
	}
	for _, want := range []string{"WideEP-ready: every rail reaches every remote rail", "NVSHMEM_HCA_LIST=rxe0:1,rxe1:1",
		"DEEP_EP_DEVICE_TO_HCA_MAPPING=0:rxe0:1,1:rxe1:1", "NCCL_CROSS_NIC=1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("terminal lacks %q", want)
		}
	}

	rail := ifaceOf(t, sw, sw.VMs[0], sw.VMs[0].RailIP)
	swRun(t, sw, sw.VMs[0], "echo 2 > /proc/sys/net/ipv4/conf/"+rail+"/arp_ignore; /sbin/ip neigh flush all")
	swRun(t, sw, sw.VMs[1], "/sbin/ip neigh flush all")
	code, rep, stdout = runCrossRails(t, sw)
	a = reach(t, rep)
	want := "client-0 rail0 (rxe0) → server-0 rail1 (rxe1)"
	if code == 0 || a.Verdict != schema.NotWideEPReady || a.RailOnly || strings.Join(blockedPairs(a), "; ") != want {
		t.Fatalf("planted: exit %d, %s, rail-only %v, blocked %q; want not WideEP-ready naming %q only", code, a.Verdict, a.RailOnly, blockedPairs(a), want)
	}
	if !strings.Contains(stdout, "not WideEP-ready: 1 of 4 rail pairs cannot reach each other: "+want) {
		t.Errorf("terminal does not name the blocked pair")
	}
}

// ifaceOf is the VM's interface holding address.
func ifaceOf(t *testing.T, p *Pair, vm *VM, address string) string {
	t.Helper()
	name := strings.TrimSpace(swRun(t, p, vm, "/sbin/ip -o -4 addr show to "+address+" | cut -d' ' -f2"))
	if name == "" {
		t.Fatalf("%s: no interface holds %s", vm.Name, address)
	}
	return name
}

// swRun runs a shell line on a VM of another pair than the lane's.
func swRun(t *testing.T, p *Pair, vm *VM, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(p.SSH(vm), line)
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", vm.Name, line, err, out)
	}
	return string(out)
}
