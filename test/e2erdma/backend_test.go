package e2erdma

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/backend/ssh"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// TestBackendOnVMs drives real soft-RoCE tools between the VMs through the
// ssh backend directly: provisioning with device checks, discovery of the
// VMs' real sysfs, and real ib_write_bw, ib_read_lat, rping, ucx_perftest.
func TestBackendOnVMs(t *testing.T) {
	needVMs(t)
	b, eps := newBackend(t)

	t.Run("provision", func(t *testing.T) {
		got, err := b.Provision(timeout(t, 60*time.Second), eps[:])
		if err != nil {
			t.Fatal(err)
		}
		copy(eps[:], got)
		for i, ep := range got {
			if ep.Address != pair.VMs[i].DataIP || ep.Device != "rxe0" || ep.GIDIndex == nil || *ep.GIDIndex != 1 {
				t.Errorf("%s: address %s device %s gid %v; want %s rxe0 1", ep.Name, ep.Address, ep.Device, ep.GIDIndex, pair.VMs[i].DataIP)
			}
		}
	})

	t.Run("discover", func(t *testing.T) {
		inv, err := b.Discover(timeout(t, 60*time.Second), eps[0])
		if err != nil {
			t.Fatal(err)
		}
		d, p, err := inv.Pick("auto")
		if err != nil {
			t.Fatal(err)
		}
		if d.Name != "rxe0" || p.State != "ACTIVE" || p.LinkLayer != "Ethernet" || p.Netdev != "eth0" ||
			p.Rate != "2.5 Gb/sec (1X SDR)" || p.RateBps != 2.5e9 || p.CeilingBps != 2.5e9 ||
			p.RoCEv2GIDIndex == nil || *p.RoCEv2GIDIndex != 1 || p.NetdevMTU != 4200 || p.ActiveMTU != 4096 || d.PCIAddress != "" {
			t.Errorf("rxe0 as discovered over ssh: %+v %+v", d, p)
		}
		if bps, detail, ok := b.LineRate(timeout(t, 30*time.Second), eps[0]); !ok || bps != 2.5e9 || detail != "vm1 rxe0 port 1: 2.5 Gb/sec (1X SDR)" {
			t.Errorf("LineRate = %g %q %v", bps, detail, ok)
		}
		if !b.HasRDMA(timeout(t, 30*time.Second), eps[1]) {
			t.Error("HasRDMA(vm2) = false")
		}
		if p.GIDs[1].IPv4 != "10.9.0.1" {
			t.Errorf("GID 1 = %+v; want 10.9.0.1", p.GIDs[1])
		}
		// rdmabench discover inside the VM reads the same sysfs directly.
		out, err := b.Exec(timeout(t, 60*time.Second), eps[0], []string{"rdmabench", "discover", "-o", "json", "--no-gpu"})
		if err != nil {
			t.Fatal(err)
		}
		var local nic.Inventory
		if err := json.Unmarshal(out, &local); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !reflect.DeepEqual(local.Devices, inv.Devices) {
			t.Errorf("discover in the VM:\n%+v\nover ssh:\n%+v", local.Devices, inv.Devices)
		}
		saveFixture(t, "discover-vm1.json", out)
		table, err := b.Exec(timeout(t, 60*time.Second), eps[0], []string{"rdmabench", "discover"})
		if err != nil || !strings.Contains(string(table), "rxe0    1     ACTIVE  Ethernet  eth0") {
			t.Errorf("discover table: %v\n%s", err, table)
		}
		saveFixture(t, "discover-vm1.txt", table)
		if *record {
			recordTree(t, b, eps[0], "rxe-vm")
		}
	})

	t.Run("ib_write_bw", func(t *testing.T) {
		args := []string{"ib_write_bw", "-d", "rxe0", "-x", "1", "--report_gbits", "-F", "-n", "500", "-s", "65536"}
		cli, srv, ce, se := perftestPair(t, b, eps, 120*time.Second, args...)
		if ce.Code != 0 || se.Code != 0 {
			t.Fatalf("exit client %d server %d\n%s%s", ce.Code, se.Code, cli.out, cli.err)
		}
		rows := bwRows(cli.out.String())
		if rows[65536] <= 0 || rows[65536] > 2.5 {
			t.Fatalf("client BW at 64 KiB = %v Gb/s; want a real figure below the 2.5 Gb/s line\n%s", rows[65536], cli.out)
		}
		t.Logf("ib_write_bw 64 KiB: %.2f Gb/s (%.0f%% of rxe's 2.5 Gb/s) in %v", rows[65536], rows[65536]/2.5*100, ce.Elapsed)
		saveFixture(t, "ib_write_bw_64k_client.txt", cli.out.Bytes())
		saveFixture(t, "ib_write_bw_64k_server.txt", srv.out.Bytes())
	})

	t.Run("ib_write_bw sweep", func(t *testing.T) {
		args := []string{"ib_write_bw", "-d", "rxe0", "-x", "1", "--report_gbits", "-F", "-a", "-n", "5"}
		cli, srv, ce, se := perftestPair(t, b, eps, 180*time.Second, args...)
		rows := bwRows(cli.out.String())
		if ce.Code != 0 || se.Code != 0 || len(rows) != 23 || rows[8388608] <= 0 {
			t.Fatalf("sweep: exit %d/%d, %d rows; want 23 sizes\n%s%s", ce.Code, se.Code, len(rows), cli.out, cli.err)
		}
		t.Logf("ib_write_bw -a: 8 MiB %.2f Gb/s, 4 KiB %.2f Gb/s", rows[8388608], rows[4096])
		saveFixture(t, "ib_write_bw_sweep_client.txt", cli.out.Bytes())
		saveFixture(t, "ib_write_bw_sweep_server.txt", srv.out.Bytes())
	})

	t.Run("ib_read_lat", func(t *testing.T) {
		args := []string{"ib_read_lat", "-d", "rxe0", "-x", "1", "-F", "-n", "200", "-s", "64"}
		cli, srv, ce, se := perftestPair(t, b, eps, 120*time.Second, args...)
		if ce.Code != 0 || se.Code != 0 || !strings.Contains(cli.out.String(), "t_avg[usec]") {
			t.Fatalf("exit %d/%d\n%s%s", ce.Code, se.Code, cli.out, cli.err)
		}
		saveFixture(t, "ib_read_lat_64_client.txt", cli.out.Bytes())
		saveFixture(t, "ib_read_lat_64_server.txt", srv.out.Bytes())
	})

	t.Run("rping", func(t *testing.T) {
		srv := start(t, b, eps[0], nil, "rping", "-s", "-a", eps[0].Address, "-C", "5", "-v")
		var cli *run
		for try := 0; try < 10; try++ { // RDMA-CM listens where no listen table shows it: retry the client
			time.Sleep(time.Second)
			cli = start(t, b, eps[1], nil, "rping", "-c", "-a", eps[0].Address, "-C", "5", "-v")
			if cli.wait(t, 60*time.Second).Code == 0 {
				break
			}
		}
		se := srv.wait(t, 30*time.Second)
		if n := strings.Count(cli.out.String(), "ping data: rdma-ping-"); n != 5 || se.Code != 0 {
			t.Fatalf("%d pings, server exit %d\n%s%s", n, se.Code, cli.out, cli.err)
		}
		saveFixture(t, "rping_client.txt", cli.out.Bytes())
		saveFixture(t, "rping_server.txt", srv.out.Bytes())
	})

	t.Run("ucx_perftest rc_verbs", func(t *testing.T) {
		srv := start(t, b, eps[0], nil, "ucx_perftest", "-d", "rxe0:1", "-x", "rc_verbs", "-p", "13337")
		waitPort(t, b, eps[0], 13337)
		cli := start(t, b, eps[1], nil, "ucx_perftest", eps[0].Address, "-d", "rxe0:1", "-x", "rc_verbs", "-p", "13337",
			"-t", "put_bw", "-D", "zcopy", "-s", "65536", "-n", "300")
		ce, se := cli.wait(t, 120*time.Second), srv.wait(t, 30*time.Second)
		if ce.Code != 0 || se.Code != 0 || !strings.Contains(cli.out.String(), "Final:") {
			t.Fatalf("exit %d/%d\n%s%s", ce.Code, se.Code, cli.out, cli.err)
		}
		saveFixture(t, "ucx_perftest_put_bw_rc_verbs_client.txt", cli.out.Bytes())
		saveFixture(t, "ucx_perftest_put_bw_rc_verbs_server.txt", srv.out.Bytes())
	})

	t.Run("ucx_perftest tcp", func(t *testing.T) {
		env := map[string]string{"UCX_TLS": "tcp", "UCX_NET_DEVICES": "eth0"}
		srv := start(t, b, eps[0], env, "ucx_perftest", "-p", "13337")
		waitPort(t, b, eps[0], 13337)
		cli := start(t, b, eps[1], env, "ucx_perftest", eps[0].Address, "-p", "13337", "-t", "tag_bw", "-s", "65536", "-n", "300")
		ce, se := cli.wait(t, 120*time.Second), srv.wait(t, 30*time.Second)
		if ce.Code != 0 || se.Code != 0 || !strings.Contains(cli.out.String(), "Final:") {
			t.Fatalf("exit %d/%d\n%s%s", ce.Code, se.Code, cli.out, cli.err)
		}
		saveFixture(t, "ucx_perftest_tag_bw_tcp_client.txt", cli.out.Bytes())
	})
}

// recordTree records the sysfs files discovery reads inside the VM into
// nic/testdata/sysfs/NAME (rdmabench discover --record, then tar).
func recordTree(t *testing.T, b *ssh.Backend, ep endpoint.Endpoint, name string) {
	out, err := b.Exec(timeout(t, 60*time.Second), ep, []string{"sh", "-c",
		"rm -rf /tmp/rec && rdmabench discover --no-gpu --record /tmp/rec >/dev/null && tar -C /tmp/rec -cf - ."})
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(repoRoot, "nic", "testdata", "sysfs", name)
	os.RemoveAll(dst)
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dst, filepath.Clean(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			_ = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			_ = os.MkdirAll(filepath.Dir(name), 0o755)
			data, _ := io.ReadAll(tr)
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
