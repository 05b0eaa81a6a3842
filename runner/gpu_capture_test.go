package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// The H200 captures of 2026-11-25 (testdata/gpu/2026-11-25-h200-nixl-ucx,
// README there): the real nixlbench through rdmabench on one GPU. Each
// result re-parses to the report's figures, and the transport is read from
// UCX's own tables for the test's op and memory: VRAM WRITE is cuda_ipc,
// VRAM READ is UCX's software emulation over tcp (cuda_ipc turns get_zcopy
// off where GPU 0 has no NVLink) until UCX_CUDA_IPC_ENABLE_GET_ZCOPY=y,
// which gives cuda_ipc and WRITE's speed.
func TestH200NixlCaptures(t *testing.T) {
	const dir = "../testdata/gpu/2026-11-25-h200-nixl-ucx"
	want := map[string]struct{ kind, detail, note string }{
		"dram-read":           {parsers.TransportShm, "cma (READ host<-host)", ""},
		"dram-write":          {parsers.TransportShm, "cma+cuda_copy (WRITE host->host)", ""},
		"vram-read":           {parsers.TransportTCP, "software emulation over tcp (READ cuda<-cuda)", "UCX_CUDA_IPC_ENABLE_GET_ZCOPY=y"},
		"vram-write":          {parsers.TransportP2P, "cuda_ipc (WRITE cuda->cuda)", ""},
		"vram-read-get-zcopy": {parsers.TransportP2P, "cuda_ipc (READ cuda<-cuda)", ""},
	}
	best := map[string]float64{}
	for _, sub := range []string{"rdmabench/results", "get-zcopy/results"} {
		rep, err := schema.Load(filepath.Join(dir, sub, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Results {
			w, ok := want[r.Test]
			if !ok {
				t.Fatalf("%s: no expectation for %s", sub, r.Test)
			}
			f, err := os.Open(filepath.Join(dir, sub, r.RawOutputs[0]))
			if err != nil {
				t.Fatal(err)
			}
			m, err := DefaultParse("nixlbench", f)
			f.Close()
			if err != nil || !m.OK || len(m.Samples) != len(r.Samples) {
				t.Fatalf("%s/%s: parse %v ok=%v, %d sizes (report %d)", sub, r.Test, err, m.OK, len(m.Samples), len(r.Samples))
			}
			for i, s := range m.Samples {
				if s.Bytes != r.Samples[i].Bytes || *s.BWAvgBps != *r.Samples[i].BWAvgBps {
					t.Errorf("%s/%s size %d: %d B at %v b/s; report %d B at %v b/s", sub, r.Test, i, s.Bytes, *s.BWAvgBps, r.Samples[i].Bytes, *r.Samples[i].BWAvgBps)
				}
			}
			tr := m.Transport
			if tr == nil || tr.Kind != w.kind || !strings.HasPrefix(tr.Detail, w.detail) || (w.note == "") != (tr.Note == "") || !strings.Contains(tr.Note, w.note) {
				t.Errorf("%s/%s: transport %+v, want %s %q note %q", sub, r.Test, tr, w.kind, w.detail, w.note)
			}
			if sub == "get-zcopy/results" {
				best[r.Test] = r.BestBps
			}
		}
	}
	// Same session, same GPU: get_zcopy on is over a thousand times faster.
	if slow, fast := best["vram-read"], best["vram-read-get-zcopy"]; slow <= 0 || fast < 1000*slow {
		t.Errorf("VRAM READ %v b/s by default, %v b/s with get_zcopy: want the second > 1000× the first", slow, fast)
	}
}

// UCCL on the same machine, raw (testdata/gpu/2026-11-25-h200-uccl): its
// RDMA transport finds no device and dies; its tcp transport goes through
// NCCL, which refuses two ranks on one GPU. Both are named, not "no table".
func TestH200UCCLCaptures(t *testing.T) {
	const dir = "../testdata/gpu/2026-11-25-h200-uccl"
	for file, want := range map[string]struct {
		class parsers.ErrorClass
		text  string
	}{
		"vram_write.txt":                     {parsers.ClassNoDevice, "UCCL found no RDMA device"},
		"vram_read.txt":                      {parsers.ClassNoDevice, "UCCL found no RDMA device"},
		"vram_write_tcp.txt":                 {parsers.ClassUsageError, "ncclCommInitPeer failed: invalid usage"},
		"nccl-transport/vram_write_nccl.txt": {parsers.ClassUsageError, "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device"},
	} {
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := parsers.ParseNixlbench(f)
		f.Close()
		if err != nil || len(ms) == 0 || ms[0].OK || ms[0].ErrorClass != want.class || !strings.Contains(ms[0].Error, want.text) {
			t.Errorf("%s: %v %+v; want %s %q", file, err, ms, want.class, want.text)
		}
	}
}

// Preflight on the H200 with a piece hidden: NIXL_PLUGIN_DIR without the
// UCX plugin skips the UCX legs with the fix and measures nothing over
// them; the unchanged build passes every check.
func TestH200PreflightCaptures(t *testing.T) {
	const dir = "../testdata/gpu/2026-11-25-h200-nixl-ucx/preflight"
	hidden, err := schema.Load(filepath.Join(dir, "no-ucx-plugin/results/report.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range hidden.Results {
		if r.Backend == "UCX" && (r.Verdict != schema.VerdictSkipped || !strings.Contains(r.Reason, "preflight nixl-plugin-UCX: no UCX plugin in /tmp/plugins-noucx (it has UCCL)")) {
			t.Errorf("%s [%s]: %s %q", r.Test, r.Backend, r.Verdict, r.Reason)
		}
	}
	built, err := schema.Load(filepath.Join(dir, "as-built/results/report.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range built.Preflight {
		for _, c := range ep.Checks {
			if c.Status != schema.PreflightPass {
				t.Errorf("as built, %s on %s: %s %q", c.ID, ep.Endpoint, c.Status, c.Evidence)
			}
		}
	}
}

// Preflight on the H200 host read NCCL's version from the library the
// loader resolves (libnccl2 2.28.3 installed there) and the GPU through
// nvidia-smi under timeout(1).
func TestH200PreflightCapture(t *testing.T) {
	b, err := os.ReadFile("../testdata/gpu/2026-11-25-h200-preflight/preflight.json")
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Preflight []schema.PreflightEndpoint `json:"preflight"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Preflight) != 1 || out.Preflight[0].Versions[schema.FingerprintNCCL] != "2.28.3" {
		t.Fatalf("preflight %+v", out.Preflight)
	}
	checks := map[string]string{}
	for _, c := range out.Preflight[0].Checks {
		checks[c.ID] = c.Status
	}
	if checks["gpu-count"] != schema.PreflightPass || checks["binary-all_reduce_perf"] != schema.PreflightFail {
		t.Errorf("checks %v", checks)
	}
}

// TestH100KVCaptures replays the KV transfer between two H100s
// (testdata/gpu/h100-kv-gpu2gpu, README there): every UCX result re-parses
// from the initiator's raw output to the report's figures and names
// cuda_ipc (GPU peer-to-peer) from UCX's own tables; the probe's results
// name the probe; and the progress thread's toll is what the README says.
func TestH100KVCaptures(t *testing.T) {
	const dir = "../testdata/gpu/h100-kv-gpu2gpu"
	best := map[string]map[int64]float64{} // run3's GB/s per test and block
	for _, run := range []string{"run1", "run2-alloc", "run3-progress-thread"} {
		rep, err := schema.Load(filepath.Join(dir, run, "rdmabench", "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		ucx := 0
		for _, r := range rep.Results {
			if r.Verdict != schema.VerdictPass {
				if !strings.Contains(r.Test, "uccl") {
					t.Errorf("%s/%s: %s (%s)", run, r.Test, r.Verdict, r.Reason)
				}
				continue
			}
			var initiator string
			for _, o := range r.RawOutputs {
				if strings.Contains(o, "initiator") {
					initiator = o
				}
			}
			f, err := os.Open(filepath.Join(dir, run, "rdmabench", initiator))
			if err != nil {
				t.Fatal(err)
			}
			program := r.Program
			if program == "" {
				program = r.Tool
			}
			m, err := DefaultParse(program, f)
			f.Close()
			if err != nil || !m.OK || len(m.Samples) != len(r.Samples) || len(m.Samples) != 9 {
				t.Fatalf("%s/%s: parse %v ok=%v, %d sizes (report %d)", run, r.Test, err, m.OK, len(m.Samples), len(r.Samples))
			}
			for i, s := range m.Samples {
				if s.Bytes != r.Samples[i].Bytes || *s.BWAvgBps != *r.Samples[i].BWAvgBps {
					t.Errorf("%s/%s size %d: %d B at %v b/s; report %d B at %v b/s", run, r.Test, i, s.Bytes, *s.BWAvgBps, r.Samples[i].Bytes, *r.Samples[i].BWAvgBps)
				}
				if run == "run3-progress-thread" {
					if best[r.Test] == nil {
						best[r.Test] = map[int64]float64{}
					}
					best[r.Test][s.Bytes] = *s.BWAvgBps / 8e9
				}
			}
			if tr := m.Transport; tr == nil || tr.Kind != parsers.TransportP2P || !strings.HasPrefix(tr.Detail, "cuda_ipc (") {
				t.Errorf("%s/%s: transport %+v, want cuda_ipc (GPU P2P) from UCX's tables", run, r.Test, tr)
			}
			if probe := r.Tool == "nixl_probe"; probe != (r.Program == "rdmabench-nixl") {
				t.Errorf("%s/%s: tool %s, program %q", run, r.Test, r.Tool, r.Program)
			}
			ucx++
		}
		if want := map[string]int{"run1": 5, "run2-alloc": 7, "run3-progress-thread": 6}[run]; ucx != want {
			t.Errorf("%s: %d UCX results passed, want %d", run, ucx, want)
		}
	}
	// NIXL's progress thread more than halves both at 16 MiB; without it
	// the probe reads 6.4 % faster than nixlbench there.
	const mib16 = 16 << 20
	if r := best["nixlbench-read"][mib16] / best["nixlbench-pt-read"][mib16]; r < 2 {
		t.Errorf("nixlbench without/with the progress thread at 16 MiB: %.2f×", r)
	}
	if r := best["probe-nopt-read"][mib16] / best["probe-pt-read"][mib16]; r < 2 {
		t.Errorf("probe without/with the progress thread at 16 MiB: %.2f×", r)
	}
	if d := best["probe-nopt-read"][mib16]/best["nixlbench-read"][mib16] - 1; d < 0.06 || d > 0.07 {
		t.Errorf("probe against nixlbench at 16 MiB, no progress thread: %+.1f %%, README says +6.4 %%", d*100)
	}
}
