package e2erdma

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/report/schema"
)

// railScenario is the VMs as ssh hosts whose data addresses are on the
// second rail (rxe1's netdev, 10.9.1.0/24), with an ib_write_bw that must
// ride RDMA; device is "" (each host's own, chosen from the data address)
// or one forced on every host.
func railScenario(device string) string {
	var hosts strings.Builder
	for _, vm := range pair.VMs {
		fmt.Fprintf(&hosts, "  - {name: %s, address: 127.0.0.1, port: %d, user: root, keyFile: %s, knownHostsFile: %s, dataAddress: %s}\n",
			vm.Name, vm.SSHPort, pair.KeyFile, pair.KnownHosts, vm.RailIP)
	}
	defaults := "defaults:\n  timeout: 120s\n"
	if device != "" {
		defaults += "  device: " + device + "\n"
	}
	return `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: softroce-rails
backend: ssh
hosts:
` + hosts.String() + `lineRate: auto
` + defaults + `pools:
  - {name: server, hosts: [vm1]}
  - {name: client, hosts: [vm2]}
tests:
  - name: write-bw
    tool: ib_write_bw
    from: client
    to: server
    args:
      sizes: [64KiB]
      iterations: 300
    expect:
      transport: rdma
`
}

// sentPackets reads a VM's rxe device's sent-packet counter.
func sentPackets(t *testing.T, vm *VM, dev string) int64 {
	t.Helper()
	out := vmRun(t, vm, "cat /sys/class/infiniband/"+dev+"/ports/1/hw_counters/sent_pkts")
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("%s %s sent_pkts %q: %v", vm.Name, dev, out, err)
	}
	return n
}

// vmRun runs a shell line on a VM over ssh, bounded.
func vmRun(t *testing.T, vm *VM, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(vmShell(vm), line)
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).Output()
	if err != nil {
		t.Fatalf("%s: %s: %v", vm.Name, line, err)
	}
	return string(out)
}

// runRails runs `rdmabench run` on railScenario and returns its exit code
// and report, with each VM's rxe0 and rxe1 sent packets around it.
func runRails(t *testing.T, device string) (int, *schema.Report, map[string][2]int64) {
	t.Helper()
	scenario := filepath.Join(t.TempDir(), "rails.yaml")
	if err := os.WriteFile(scenario, []byte(railScenario(device)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := map[string][2]int64{}
	for _, vm := range pair.VMs {
		before[vm.Name] = [2]int64{sentPackets(t, vm, "rxe0"), sentPackets(t, vm, "rxe1")}
	}
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "bin", "rdmabench"), "run", scenario, "--out", out, "--html", "none")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("rdmabench run (device %q): exit %d\n%s", device, code, stderr.String())
	rep, err := schema.Load(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	delta := map[string][2]int64{}
	for _, vm := range pair.VMs {
		b := before[vm.Name]
		delta[vm.Name] = [2]int64{sentPackets(t, vm, "rxe0") - b[0], sentPackets(t, vm, "rxe1") - b[1]}
	}
	return code, rep, delta
}

// TestDeviceAndGIDFollowTheDataInterface: each VM has two soft-RoCE
// devices, rxe0 on eth0 (10.9.0.0/24) and rxe1 on the second rail
// (10.9.1.0/24, with another IPv4 and a global IPv6 address beside it:
// several GIDs). With the data addresses on the rail and no device named,
// rdmabench picks rxe1 (not the first device) and the GID of the data
// address (not the first GID), the test passes with its path proved on
// rxe1, and the counters show the traffic on rxe1 and not on rxe0.
// Forcing rxe0 sends the traffic over eth0's network, which the proof on
// the data interface's device (rxe1) calls invalid.
func TestDeviceAndGIDFollowTheDataInterface(t *testing.T) {
	needVMs(t)
	if pair.VMs[0].RailIP == "" {
		t.Skip("the VMs have no second rail")
	}
	// The GID each VM's rail address holds on rxe1, as its sysfs says.
	wantGID := map[string]int{}
	for _, vm := range pair.VMs {
		inv, err := nic.DiscoverRemote(context.Background(), func(ctx context.Context, argv []string) ([]byte, error) {
			args := append(vmShell(vm), strings.Join(quoteAll(argv), " "))
			return exec.CommandContext(ctx, args[0], args[1:]...).Output()
		})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range inv.Devices {
			for _, p := range d.Ports {
				for _, g := range p.GIDs {
					if d.Name == "rxe1" && g.IPv4 == vm.RailIP && g.Type == "RoCE v2" {
						wantGID[vm.Name], found = g.Index, true
					}
				}
				if d.Name == "rxe1" {
					t.Logf("%s rxe1 GIDs: %+v", vm.Name, p.GIDs)
				}
			}
		}
		if !found {
			t.Fatalf("%s: no RoCE v2 GID of %s on rxe1", vm.Name, vm.RailIP)
		}
		if wantGID[vm.Name] == 0 || len(inv.Devices) != 2 {
			t.Fatalf("%s: the data GID is the first one (%d) or not two devices (%d): the test proves nothing", vm.Name, wantGID[vm.Name], len(inv.Devices))
		}
	}

	if *record { // the two rails' sysfs, for nic's unit tests
		b, eps := newBackend(t)
		recordTree(t, b, eps[0], "rxe-vm-rails")
	}

	code, rep, delta := runRails(t, "")
	if code != 0 || len(rep.Results) != 1 {
		t.Fatalf("exit %d, %d results; want 0 and one", code, len(rep.Results))
	}
	for _, ep := range rep.Endpoints {
		if ep.Device != "rxe1" || ep.GIDIndex == nil || *ep.GIDIndex != wantGID[ep.Host] || !strings.HasPrefix(ep.DeviceFrom, "GID of 10.9.1.") {
			t.Errorf("endpoint %s on %s: device %s GID %v from %q; want rxe1, GID %d, from its data address",
				ep.Name, ep.Host, ep.Device, ep.GIDIndex, ep.DeviceFrom, wantGID[ep.Host])
		}
	}
	res := rep.Results[0]
	if res.Verdict != schema.VerdictPass || res.Path == nil || !res.Path.Verified {
		t.Fatalf("%s %q path %+v; want pass, proved", res.Verdict, res.Reason, res.Path)
	}
	for _, pc := range res.Path.Endpoints {
		if pc.Device != "rxe1" {
			t.Errorf("path proof on %s, want rxe1", pc.Device)
		}
	}
	for name, d := range delta {
		t.Logf("%s sent packets during the run: rxe0 %d, rxe1 %d", name, d[0], d[1])
		if d[1] < 300 || d[0] > d[1]/20 {
			t.Errorf("%s: rxe0 sent %d packets, rxe1 %d: the traffic must cross rxe1 and not rxe0", name, d[0], d[1])
		}
	}

	code, rep, delta = runRails(t, "rxe0")
	if code != 1 || len(rep.Results) != 1 {
		t.Fatalf("forcing rxe0: exit %d; want 1 (invalid)", code)
	}
	res = rep.Results[0]
	if res.Verdict != schema.VerdictInvalid || !strings.Contains(res.Reason, "is on rxe1, the scenario named rxe0") {
		t.Errorf("forcing rxe0: %s %q; want invalid, naming the data interface's rxe1", res.Verdict, res.Reason)
	}
	for name, d := range delta {
		t.Logf("%s sent packets during the forced run: rxe0 %d, rxe1 %d", name, d[0], d[1])
		if d[0] < 300 || d[1] > d[0]/20 {
			t.Errorf("%s forced to rxe0: rxe0 sent %d, rxe1 %d; want the traffic on rxe0", name, d[0], d[1])
		}
	}
}

// quoteAll single-quotes each word for the remote shell.
func quoteAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}
