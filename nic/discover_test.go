package nic

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func tree(name string) string { return filepath.Join("testdata", "sysfs", name) }

// TestDiscoverGolden checks the whole inventory of each recorded tree
// against its golden JSON (refresh with -update).
func TestDiscoverGolden(t *testing.T) {
	for _, name := range treeNames(t) {
		t.Run(name, func(t *testing.T) {
			inv, err := Discover(Options{Root: tree(name)})
			if err != nil {
				t.Fatal(err)
			}
			inv.Root = name
			got, _ := json.MarshalIndent(inv, "", "  ")
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				_ = os.MkdirAll(filepath.Dir(golden), 0o755)
				_ = os.WriteFile(golden, append(got, '\n'), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./nic -update)", err)
			}
			if !bytes.Equal(bytes.TrimSpace(want), got) {
				t.Errorf("%s differs from the golden file:\n%s", name, got)
			}
		})
	}
}

func treeNames(t *testing.T) []string {
	ents, err := os.ReadDir(filepath.Join("testdata", "sysfs"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestDiscoverValues(t *testing.T) {
	three, one := 3, 1
	cases := []struct {
		tree, dev     string
		netdev, layer string
		rate, ceiling float64
		gid           *int
		mtu, numa     int
		pci           string
		pcieBps       float64
	}{
		{"cx7-roce-gpu", "mlx5_0", "ens1f0np0", "Ethernet", 400e9, 400e9, &three, 4096, 0, "0000:1a:00.0", 504123e6},
		{"cx7-roce-gpu", "mlx5_1", "ens2f0np0", "Ethernet", 400e9, 252062e6, &three, 4096, 1, "0000:9a:00.0", 252062e6},
		{"ib-ndr", "mlx5_0", "ib0", "InfiniBand", 400e9, 400e9, nil, 4096, 0, "0000:0c:00.0", 504123e6},
		{"rxe-vm", "rxe0", "eth0", "Ethernet", 2.5e9, 2.5e9, &one, 4096, -1, "", 0},
	}
	for _, c := range cases {
		t.Run(c.tree+"/"+c.dev, func(t *testing.T) {
			inv, err := Discover(Options{Root: tree(c.tree), NoGPU: true})
			if err != nil {
				t.Fatal(err)
			}
			d, p, err := inv.Pick(c.dev)
			if err != nil {
				t.Fatal(err)
			}
			if p.Netdev != c.netdev || p.LinkLayer != c.layer || p.RateBps != c.rate || p.CeilingBps != c.ceiling {
				t.Errorf("port = %s %s %g ceiling %g; want %s %s %g ceiling %g", p.Netdev, p.LinkLayer, p.RateBps, p.CeilingBps, c.netdev, c.layer, c.rate, c.ceiling)
			}
			if !reflect.DeepEqual(p.RoCEv2GIDIndex, c.gid) || p.ActiveMTU != c.mtu {
				t.Errorf("gid %v mtu %d; want %v %d", p.RoCEv2GIDIndex, p.ActiveMTU, c.gid, c.mtu)
			}
			if d.NUMANode != c.numa || d.PCIAddress != c.pci || d.PCIeBps != c.pcieBps {
				t.Errorf("numa %d pci %s pcie %g; want %d %s %g", d.NUMANode, d.PCIAddress, d.PCIeBps, c.numa, c.pci, c.pcieBps)
			}
		})
	}
}

func TestPick(t *testing.T) {
	inv, err := Discover(Options{Root: tree("ib-ndr"), NoGPU: true})
	if err != nil {
		t.Fatal(err)
	}
	d, p, err := inv.Pick("auto")
	if err != nil || d.Name != "mlx5_0" || p.State != "ACTIVE" {
		t.Fatalf("auto picked %v %v %v; want mlx5_0 ACTIVE", d, p, err)
	}
	d, p, err = inv.Pick("mlx5_1")
	if err != nil || d.Name != "mlx5_1" || p.State != "DOWN" || p.RateBps != 10e9 {
		t.Fatalf("mlx5_1: %v %v %v; want the DOWN port", d, p, err)
	}
	_, _, err = inv.Pick("mlx5_9")
	want := `RDMA device "mlx5_9" not found; this host has mlx5_0 port 1 ACTIVE, mlx5_1 port 1 DOWN (` + "`rdmabench discover` lists them)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if r, err := inv.LineRate(""); err != nil || r != 400e9 {
		t.Fatalf("LineRate = %g %v", r, err)
	}
}

func TestNoRDMA(t *testing.T) {
	dir := t.TempDir()
	inv, err := Discover(Options{Root: dir})
	if err != nil || len(inv.Devices) != 0 {
		t.Fatalf("empty root: %v %v", inv, err)
	}
	if HasRDMA(dir) {
		t.Fatal("HasRDMA on an empty root")
	}
	if !HasRDMA(tree("ib-ndr")) {
		t.Fatal("HasRDMA(ib-ndr) = false")
	}
	if _, _, err := inv.Pick(""); err == nil {
		t.Fatal("Pick on no devices must fail")
	}
}

// TestRecord checks that a recording of a tree discovers the same.
func TestRecord(t *testing.T) {
	for _, name := range treeNames(t) {
		rec := t.TempDir()
		a, err := Discover(Options{Root: tree(name), Record: rec})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Discover(Options{Root: rec})
		if err != nil {
			t.Fatal(err)
		}
		a.Root, b.Root = "", ""
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: recorded tree discovers differently:\n%+v\n%+v", name, a, b)
		}
	}
}
