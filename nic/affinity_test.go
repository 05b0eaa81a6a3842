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
