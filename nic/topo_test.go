package nic

import (
	"os"
	"reflect"
	"testing"
)

func TestParseTopo(t *testing.T) {
	b, err := os.ReadFile("testdata/topo-cx7.txt")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := ParseTopo(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 4 {
		t.Fatalf("%d GPUs; want 4", len(gpus))
	}
	g := gpus[1]
	if g.Name != "GPU1" || g.Relation != "PXB" || !reflect.DeepEqual(g.Nearest, []string{"mlx5_0"}) ||
		g.NICs["mlx5_1"] != "SYS" || g.CPUs != "0-47,96-143" || g.NUMA != "0" {
		t.Errorf("GPU1 = %+v", g)
	}
	if gpus[2].Nearest[0] != "mlx5_1" || gpus[2].Relation != "PIX" {
		t.Errorf("GPU2 = %+v", gpus[2])
	}
}

func TestParseTopoOddInput(t *testing.T) {
	for _, in := range []string{"", "No devices were found\n", "\tGPU0\nGPU0\n"} {
		if g, err := ParseTopo(in); err != nil || g != nil {
			t.Errorf("ParseTopo(%q) = %v, %v; want nothing", in, g, err)
		}
	}
	if _, err := ParseTopo("GPU0\t X \tPIX\n"); err == nil {
		t.Error("GPU rows without a header must be an error")
	}
}

func FuzzParseTopo(f *testing.F) {
	b, _ := os.ReadFile("testdata/topo-cx7.txt")
	f.Add(string(b))
	f.Add("\tGPU0\tNIC0\nGPU0\t X \tPIX\n")
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseTopo(s) })
}

func FuzzParseRate(f *testing.F) {
	f.Add("400 Gb/sec (4X NDR)")
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseRate(s); err == nil && v < 0 {
			t.Fatalf("negative rate %g", v)
		}
	})
}

// TestParseTopoRealH200 reads a real `nvidia-smi topo -m` (driver
// 580.159.04, two H200 GPUs, no NIC; recorded on a lent GPU machine): the
// header carries ANSI underline codes even when written to a file.
func TestParseTopoRealH200(t *testing.T) {
	b, err := os.ReadFile("testdata/topo-h200x2-nonic.txt")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := ParseTopo(string(b))
	if err != nil {
		t.Fatal(err)
	}
	want := []GPU{
		{Name: "GPU0", NICs: map[string]string{}, CPUs: "0-31", NUMA: "0"},
		{Name: "GPU1", NICs: map[string]string{}, CPUs: "0-31", NUMA: "0"},
	}
	if !reflect.DeepEqual(gpus, want) {
		t.Fatalf("got %+v\nwant %+v", gpus, want)
	}
}
