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
