package tool

import (
	"slices"
	"strings"
	"testing"
)

// TestDecisions: each decision the packages used to make on their own, made
// once here, on the cases that used to disagree.
func TestDecisions(t *testing.T) {
	gpu := []struct {
		tool string
		a    Settings
		want bool
	}{
		{NCCL, Settings{}, true},
		{Nixlbench, Settings{InitiatorSeg: "DRAM", TargetSeg: "vram"}, true},
		{Nixlbench, Settings{InitiatorSeg: "DRAM", TargetSeg: "DRAM"}, false},
		// perftest --use_cuda: scenarios said yes, the runner said no.
		{IBWriteBW, Settings{UseCUDA: true}, true},
		{IBWriteBW, Settings{}, false},
		{Iperf3, Settings{}, false},
		{"no-such-tool", Settings{}, false},
	}
	for _, c := range gpu {
		if got := NeedsGPU(c.tool, c.a); got != c.want {
			t.Errorf("NeedsGPU(%s, %+v) = %v, want %v", c.tool, c.a, got, c.want)
		}
	}
	tcp := map[string]bool{"tcp": true, "TCP,self": true, "tcp, sm, cuda_copy": true, "^ib": true, "rc,tcp": false, "": false, "rc_verbs": false}
	for tls, want := range tcp {
		if got := TransportsAreTCP(tls); got != want {
			t.Errorf("TransportsAreTCP(%q) = %v, want %v", tls, got, want)
		}
	}
	lat := []struct {
		tool string
		a    Settings
		want bool
	}{
		{IBReadLat, Settings{}, true}, {IBReadBW, Settings{}, false},
		{UCXPerftest, Settings{UCXTest: "tag_lat"}, true}, {UCXPerftest, Settings{UCXTest: "tag_bw"}, false},
		{NCCL, Settings{}, false}, {Rping, Settings{}, false},
	}
	for _, c := range lat {
		if got := LatencyTest(c.tool, c.a); got != c.want {
			t.Errorf("LatencyTest(%s, %+v) = %v, want %v", c.tool, c.a, got, c.want)
		}
	}
	if div, unit := DisplayUnit(FamilyMetric(FamilyNCCL)); div != 8e9 || unit != "GB/s" {
		t.Errorf("NCCL shows in %v %s, want GB/s", div, unit)
	}
	if div, unit := DisplayUnit(FamilyMetric(FamilyPerftest)); div != 1e9 || unit != "Gb/s" {
		t.Errorf("perftest shows in %v %s, want Gb/s", div, unit)
	}
	if got := ExpectKeys(UCXPerftest, Settings{UCXTest: "tag_lat"}); slices.Contains(got, "minLineRate") {
		t.Errorf("a ucx_perftest latency test may write %v", got)
	}
}

// TestTableIsWhole: every description says what every package reads of it.
func TestTableIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if seen[s.Name] {
			t.Errorf("%s described twice", s.Name)
		}
		seen[s.Name] = true
		if s.Family == "" || len(s.Programs) == 0 || s.Metric == "" || len(s.Args) == 0 || len(s.Expect) == 0 ||
			s.Install == "" || s.DefaultPort == 0 || s.Source == "" {
			t.Errorf("%s: incomplete description %+v", s.Name, s)
		}
		for _, p := range s.Programs {
			if f, ok := FamilyOf(p); !ok || f != s.Family {
				t.Errorf("%s: program %s is of family %q", s.Name, p, f)
			}
		}
		if s.Source == SourceServing && s.ImageFamily == "" {
			t.Errorf("%s comes from the serving image but names no image family", s.Name)
		}
	}
	if !slices.IsSorted(Programs()) || len(Programs()) != len(slices.Compact(Programs())) {
		t.Errorf("Programs() is not sorted and unique: %v", Programs())
	}
}

// TestNixlProbeHasItsOwnWaterfallLayer: nixlbench and the NIXL probe on
// one pair measure the NIXL layer two ways; each keeps its own name so
// neither hides the other.
func TestNixlProbeHasItsOwnWaterfallLayer(t *testing.T) {
	nb, lvl1, ok1 := WaterfallLayer(LayerOf{Program: "nixlbench", Family: FamilyNixlbench, Backend: "UCX"})
	probe, lvl2, ok2 := WaterfallLayer(LayerOf{Program: "rdmabench-nixl", Family: FamilyNixlbench, Backend: "UCX"})
	if !ok1 || !ok2 || lvl1 != LevelNIXL || lvl2 != LevelNIXL || nb != "nixlbench UCX" || probe != "NIXL probe UCX" {
		t.Errorf("nixlbench %q (%d %v), probe %q (%d %v)", nb, lvl1, ok1, probe, lvl2, ok2)
	}
	// A result names its tool (nixl_probe), not its binary: the same layer.
	if byTool, _, ok := WaterfallLayer(LayerOf{Program: NixlProbe, Family: FamilyNixlbench, Backend: "UCX"}); !ok || byTool != "NIXL probe UCX" {
		t.Errorf("a nixl_probe result is layer %q (%v), want NIXL probe UCX", byTool, ok)
	}
}

// TestGPUCopyIsTheOneHostBottomLayer: a gpu_copy result is the "GPU copy"
// layer, below UCX; a NCCL probe's sendrecv is the NCCL layer by its
// command line (its program is the tool, nccl_probe), and its other
// collectives are no layer.
func TestGPUCopyIsTheOneHostBottomLayer(t *testing.T) {
	cp := "decode-0: CUDA_VISIBLE_DEVICES=1,0 rdmabench-nccl --collective copy --device 0 --peer-device 1 -b 1048576"
	name, lvl, ok := WaterfallLayer(LayerOf{Program: GPUCopy, Family: FamilyNCCL, Commands: []string{cp}})
	if !ok || name != "GPU copy" || lvl != LevelGPUCopy || lvl >= LevelUCX {
		t.Errorf("gpu_copy: %q %d %v", name, lvl, ok)
	}
	sr := "decode-0: rdmabench-nccl --rank 0 --ranks 2 --device 0 --etcd ${etcd} --key k --collective sendrecv -b 1048576"
	if name, lvl, ok := WaterfallLayer(LayerOf{Program: NCCLProbe, Family: FamilyNCCL, Commands: []string{sr}}); !ok || name != "nccl sendrecv" || lvl != LevelNCCL {
		t.Errorf("nccl_probe sendrecv: %q %d %v", name, lvl, ok)
	}
	ar := strings.Replace(sr, "sendrecv", "all_reduce", 1)
	if name, _, ok := WaterfallLayer(LayerOf{Program: NCCLProbe, Family: FamilyNCCL, Commands: []string{ar}}); ok {
		t.Errorf("nccl_probe all_reduce is layer %q", name)
	}
}
