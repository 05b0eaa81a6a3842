package nic

import (
	"os"
	"testing"
)

func topoInventory(t *testing.T, file string) *Inventory {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := ParseTopo(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return &Inventory{GPUs: gpus}
}

// Each GPU a test uses is paired with the NIC it is given, its relation
// said, and with the host's nearer NIC where there is one: GPU2 given
// mlx5_0 crosses the sockets (SYS), mlx5_1 is on its switch (PIX). A pod
// with both as rails pairs each GPU with its nearest.
func TestAffinityPairs(t *testing.T) {
	inv := topoInventory(t, "testdata/topo-cx7.txt")
	pairs := inv.Affinity(4, []string{"mlx5_0"})
	want := []Pair{
		{GPU: "GPU0", Device: "mlx5_0", Relation: "PIX"},
		{GPU: "GPU1", Device: "mlx5_0", Relation: "PXB"},
		{GPU: "GPU2", Device: "mlx5_0", Relation: "SYS", Nearest: "mlx5_1", NearestRelation: "PIX"},
		{GPU: "GPU3", Device: "mlx5_0", Relation: "SYS", Nearest: "mlx5_1", NearestRelation: "PXB"},
	}
	checkPairs(t, pairs, want)
	checkPairs(t, inv.Affinity(4, []string{"mlx5_0", "mlx5_1"}), []Pair{
		{GPU: "GPU0", Device: "mlx5_0", Relation: "PIX"},
		{GPU: "GPU1", Device: "mlx5_0", Relation: "PXB"},
		{GPU: "GPU2", Device: "mlx5_1", Relation: "PIX"},
		{GPU: "GPU3", Device: "mlx5_1", Relation: "PXB"},
	})
	if got := inv.Affinity(0, []string{"mlx5_0"}); got != nil {
		t.Errorf("no GPUs used: %+v", got)
	}
	if got := inv.NearestNIC("GPU3", []string{"mlx5_0", "mlx5_1"}); got != "mlx5_1" {
		t.Errorf("nearest NIC of GPU3: %s", got)
	}
}

func checkPairs(t *testing.T, got, want []Pair) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d pairs: %+v", len(got), got)
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("pair %d: %+v, want %+v", i, got[i], w)
		}
	}
}

// A host without NICs in the matrix (a real two-H200 machine) has no pair
// to report.
func TestAffinityWithoutNICs(t *testing.T) {
	inv := topoInventory(t, "testdata/topo-h200x2-nonic.txt")
	if got := inv.Affinity(2, []string{"mlx5_0"}); len(got) != 0 {
		t.Errorf("%+v", got)
	}
}

func TestFartherThan(t *testing.T) {
	for _, c := range []struct {
		rel, limit string
		want       bool
	}{{"SYS", "PXB", true}, {"NODE", "PXB", true}, {"PHB", "PXB", true}, {"PXB", "PXB", false}, {"PIX", "PXB", false}, {"SYS", "SYS", false}, {"", "PXB", false}} {
		if got := FartherThan(c.rel, c.limit); got != c.want {
			t.Errorf("FartherThan(%q, %q) = %v", c.rel, c.limit, got)
		}
	}
	if !ValidRelation("PXB") || ValidRelation("NV18") || ValidRelation("X") {
		t.Error("ValidRelation")
	}
}

// On a real eight-H100 host (NVIDIA/nccl#1453) a pod given NIC8 alone has
// GPU0 PIX to it and GPU4…7 across the sockets, each with its own PIX NIC
// named; given every rail, each GPU pairs with its PIX NIC.
func TestAffinityOnARealH100Host(t *testing.T) {
	inv := topoInventory(t, "testdata/topo-h100x8-nccl1453.txt")
	if len(inv.GPUs) != 8 {
		t.Fatalf("%d GPUs", len(inv.GPUs))
	}
	one := inv.Affinity(8, []string{"NIC8"})
	if one[0] != (Pair{GPU: "GPU0", Device: "NIC8", Relation: "PIX"}) ||
		one[3] != (Pair{GPU: "GPU3", Device: "NIC8", Relation: "NODE", Nearest: "NIC5", NearestRelation: "PIX"}) ||
		one[7] != (Pair{GPU: "GPU7", Device: "NIC8", Relation: "SYS", Nearest: "NIC1", NearestRelation: "PIX"}) {
		t.Errorf("one NIC: %+v", one)
	}
	rails := inv.Affinity(8, []string{"NIC1", "NIC2", "NIC3", "NIC4", "NIC5", "NIC6", "NIC7", "NIC8"})
	want := []string{"NIC8", "NIC7", "NIC6", "NIC5", "NIC4", "NIC3", "NIC2", "NIC1"}
	for i, p := range rails {
		if p.Device != want[i] || p.Relation != "PIX" {
			t.Errorf("rails: %+v, want %s PIX", p, want[i])
		}
	}
}
