package nic

import (
	"os"
	"testing"
)

// BenchmarkDiscover measures a full discovery of the two-NIC, four-GPU tree.
func BenchmarkDiscover(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Discover(Options{Root: tree("cx7-roce-gpu")}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseTopo measures the nvidia-smi topo -m parser.
func BenchmarkParseTopo(b *testing.B) {
	text, _ := os.ReadFile("testdata/topo-cx7.txt")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseTopo(string(text)); err != nil {
			b.Fatal(err)
		}
	}
}
