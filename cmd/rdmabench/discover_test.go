package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/nic"
)

func sysfsTree(name string) string {
	return filepath.Join("..", "..", "nic", "testdata", "sysfs", name)
}

func TestDiscoverCmd(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		args []string
		code int
		want []string // lines that must appear on stdout (or stderr for errors)
	}{
		{[]string{"discover", "--root", sysfsTree("cx7-roce-gpu")}, 0, []string{
			"mlx5_0  1     ACTIVE  Ethernet  ens1f0np0  400 Gb/sec (4X NDR)  32.0 GT/s x16 (504.12 Gb/s)  400.00 Gb/s  3           4096  0",
			"mlx5_1  1     ACTIVE  Ethernet  ens2f0np0  400 Gb/sec (4X NDR)  16.0 GT/s x16 (252.06 Gb/s)  252.06 Gb/s  3           4096  1",
			"GPU2 nearest NIC: mlx5_1 (PIX)"}},
		{[]string{"discover", "--root", sysfsTree("rxe-vm")}, 0, []string{
			"rxe0    1     ACTIVE  Ethernet  eth0    2.5 Gb/sec (1X SDR)  -     2.50 Gb/s  1           4096  -"}},
		{[]string{"discover", "--root", empty}, 0, []string{"no RDMA devices (nothing under " + filepath.Join(empty, "sys/class/infiniband") + ")"}},
		{[]string{"discover", "--root", filepath.Join(empty, "typo")}, 2, []string{`--root "` + filepath.Join(empty, "typo") + `": not a directory`}},
		{[]string{"discover", "-o", "yaml"}, 2, []string{`--output "yaml": want table or json`}},
		{[]string{"discover", "extra"}, 2, nil},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, "", c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d; want %d (stderr %s)", c.args, code, c.code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out+errOut, w) {
				t.Errorf("%v: output lacks %q:\n%s%s", c.args, w, out, errOut)
			}
		}
	}
}

func TestDiscoverCmdJSONAndRecord(t *testing.T) {
	rec := t.TempDir()
	code, out, errOut := runCLI(t, "", "discover", "-o", "json", "--root", sysfsTree("ib-ndr"), "--record", rec)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var inv nic.Inventory
	if err := json.Unmarshal([]byte(out), &inv); err != nil {
		t.Fatal(err)
	}
	if len(inv.Devices) != 2 || inv.Devices[0].Ports[0].RateBps != 400e9 || inv.Devices[0].Ports[0].Netdev != "ib0" {
		t.Fatalf("inventory: %+v", inv)
	}
	if _, err := os.Stat(filepath.Join(rec, "sys/class/infiniband/mlx5_0/ports/1/rate")); err != nil {
		t.Fatalf("--record wrote no tree: %v", err)
	}
}
