package parsers

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ncclSharedCorpus finds <repo root>/../shared/corpus/<tool>: the repo root
// is the first parent holding go.mod. The test skips only when the shared
// folder is absent (a checkout without it).
func ncclSharedCorpus(t *testing.T, tool string) string {
	t.Helper()
	shared, err := ncclFindShared()
	if err != nil {
		t.Fatal(err)
	}
	if shared == "" {
		t.Skip("no shared folder beside the repository: corpus conformance skipped")
	}
	return filepath.Join(shared, "corpus", tool)
}

// ncclFindShared returns <repo root>/../shared, or "" when it is absent.
func ncclFindShared() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
	shared := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(shared); err != nil {
		return "", nil
	}
	return shared, nil
}

// ncclCorpusFiles lists the .txt captures of a corpus folder.
func ncclCorpusFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files in %s: %v", dir, err)
	}
	sort.Strings(files)
	return files
}

var ncclCorpusWants = []ncclWant{
	{file: "all_reduce_1x_rtx5090_inplace_algbw_overflow_busbw0.txt", ok: true, test: "all_reduce_perf", samples: 25, ranks: 1, avgGBps: 0, rowBytes: 134217728, busGBps: 0, inBusGBps: 0},
	{file: "all_reduce_2x_p4de_efa_srun_label_prefix.txt", ok: true, samples: 29, avgGBps: -1, rowBytes: 2147483648, busGBps: 78.33, inBusGBps: 78.33},
	{file: "all_reduce_2x_p5_efa_16GiB_srun_label_prefix.txt", ok: true, samples: 32, avgGBps: -1, rowBytes: 17179869184, busGBps: 487.09, inBusGBps: 487.26},
	{file: "all_reduce_2x_rtx5090_test_nccl_failure_after_header.txt", class: ClassToolError, test: "all_reduce_perf", ranks: 2, avgGBps: -1},
	{file: "all_reduce_4x_k80_legacy_error_column_nccl_info_interleaved.txt", ok: true, samples: 7, ranks: 4, avgGBps: 2.54225, rowBytes: 2147483648, busGBps: 2.56, inBusGBps: 2.56, inWrongNil: true},
	{file: "all_reduce_eks_mpijob_tag_output_prefix_elided.txt", ok: true, samples: 7, avgGBps: 52.9753, rowBytes: 2147483648, busGBps: 437.79, inBusGBps: 437.89},
	{file: "all_reduce_gb200_nvl72_rack_72rank_tail.txt", ok: true, samples: 5, ranks: 72, avgGBps: 745.53, rowBytes: 8589934592, busGBps: 834.57, inBusGBps: 846.82},
	{file: "all_reduce_h100_64gpu_sharp_mpijob_elided.txt", ok: true, samples: 5, avgGBps: 373.187, rowBytes: 8589934592, busGBps: 386.56, inBusGBps: 385.56},
	{file: "all_reduce_rank_prefix_per_write_chunk_fragment.txt", ok: true, samples: 10, avgGBps: -1, rowBytes: 33554432, busGBps: 29.50, inBusGBps: 28.14},
	{file: "all_reduce_v2.19.7_json_invalid_gpu_count_mpirun_abort.txt", class: ClassNoDevice, test: "all_reduce_perf", avgGBps: -1},
	{file: "rccl_all_reduce_mi355x_1node_8gpu_v2.17.9.txt", ok: true, test: "all_reduce_perf", samples: 29, ranks: 8, avgGBps: 105.615, rowBytes: 1073741824, busGBps: 402.55, inBusGBps: 401.90},
	{file: "rccl_alltoall_2node_16rank_mpirun_ucx_warnings.txt", ok: true, test: "alltoall_perf", samples: 31, ranks: 16, avgGBps: 36.0754, rowBytes: 17179869184, busGBps: 91.09, inBusGBps: 91.10, inWrongNil: true},
	{file: "rccl_alltoall_mi355x_1node_8gpu_inplace_NA.txt", ok: true, test: "alltoall_perf", samples: 25, ranks: 8, avgGBps: 58.3947, rowBytes: 134217728, busGBps: 322.22, inBusGBps: 316.42, inWrongNil: true},
	{file: "sendrecv_2gpu_legacy_uint8_inplace_error_3e02_fragment.txt", class: ClassDataError, samples: 1, avgGBps: -1, rowBytes: 37748744, busGBps: 3.22, inBusGBps: 3.23, inWrongNil: true},
}

// TestNCCLCorpusConformance parses every nccl-tests capture of the shared
// corpus; a capture without an entry in the table fails the test.
func TestNCCLCorpusConformance(t *testing.T) {
	dir := ncclSharedCorpus(t, "nccl-tests")
	wants := map[string]ncclWant{}
	for _, w := range ncclCorpusWants {
		wants[w.file] = w
	}
	for _, f := range ncclCorpusFiles(t, dir) {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			w, ok := wants[name]
			if !ok {
				t.Fatalf("new corpus file %s: add its key figures to ncclCorpusWants", name)
			}
			ms := ncclParseFile(t, f, ParseNCCL)
			if len(ms) != 1 {
				t.Fatalf("got %d measurements, want 1", len(ms))
			}
			ncclCheckWant(t, ms[0], w)
		})
	}
}

// nixlWant is what a test asserts about one nixlbench capture.
type nixlWant struct {
	file     string
	ok       bool
	class    ErrorClass
	op       string
	backend  string
	samples  int
	rowBytes int64
	rowBatch int64
	bwGBps   float64
	latUS    float64
	kind     string // transport kind, "" for none
}

var nixlCorpusWants = []nixlWant{
	{file: "error_etcd_target_uri_not_valid_libfabric_efa.txt", class: ClassConnectionFailed},
	{file: "issue1999_ci_jenkins_uccl_dram_to_vram_read_hang_tail.txt", class: ClassTimeout, op: "READ", backend: "UCCL", samples: 1, rowBytes: 16384, rowBatch: 4, bwGBps: 0.025618, latUS: 639.6},
	{file: "issue1999_ci_jenkins_ucx_dram_write_etcd_2proc_timestamped.txt", ok: true, op: "WRITE", backend: "UCX", samples: 1, rowBytes: 16384, rowBatch: 4, bwGBps: 4.524677, latUS: 3.6},
	{file: "legacy_format_mib_gib_gb_scientific_trimmed.txt", ok: true, samples: 4, rowBytes: 33554432, rowBatch: 1, bwGBps: 1361.19, latUS: 24.6508},
	{file: "legacy_rocm_ucx_vram_to_dram_write_etcd_initiator.txt", ok: true, op: "WRITE", backend: "UCX", samples: 15, rowBytes: 524288, rowBatch: 1, bwGBps: 0.407006, latUS: 1288.16},
	{file: "new_format_ucx_proto_info_interleaved.txt", ok: true, samples: 15, rowBytes: 67108864, rowBatch: 1, bwGBps: 1636.801561, latUS: 41.0, kind: TransportTCP},
}

// TestNixlbenchCorpusConformance parses every nixlbench capture of the
// shared corpus; a capture without an entry in the table fails the test.
func TestNixlbenchCorpusConformance(t *testing.T) {
	dir := ncclSharedCorpus(t, "nixlbench")
	wants := map[string]nixlWant{}
	for _, w := range nixlCorpusWants {
		wants[w.file] = w
	}
	for _, f := range ncclCorpusFiles(t, dir) {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			w, ok := wants[name]
			if !ok {
				t.Fatalf("new corpus file %s: add its key figures to nixlCorpusWants", name)
			}
			ms := ncclParseFile(t, f, ParseNixlbench)
			if len(ms) != 1 {
				t.Fatalf("got %d measurements, want 1", len(ms))
			}
			nixlCheckWant(t, ms[0], w)
		})
	}
}

func nixlCheckWant(t *testing.T, m Measurement, w nixlWant) {
	t.Helper()
	if m.OK != w.ok || m.ErrorClass != w.class {
		t.Errorf("ok=%v class=%q (%s), want ok=%v class=%q", m.OK, m.ErrorClass, m.Error, w.ok, w.class)
	}
	if m.Op != w.op || m.Backend != w.backend {
		t.Errorf("op=%q backend=%q, want %q %q", m.Op, m.Backend, w.op, w.backend)
	}
	if len(m.Samples) != w.samples {
		t.Errorf("%d samples, want %d", len(m.Samples), w.samples)
	}
	if w.rowBytes != 0 {
		s, ok := ncclFindRow(m.Samples, w.rowBytes)
		switch {
		case !ok:
			t.Errorf("no row of %d bytes", w.rowBytes)
		case s.Batch != w.rowBatch:
			t.Errorf("batch %d, want %d", s.Batch, w.rowBatch)
		case s.LatAvgUS == nil || math.Abs(*s.LatAvgUS-w.latUS) > 1e-9:
			t.Errorf("avg latency %v, want %v", s.LatAvgUS, w.latUS)
		default:
			ncclCheckGBps(t, "B/W", s.BWAvgBps, w.bwGBps)
		}
	}
	gotKind := ""
	if m.Transport != nil {
		gotKind = m.Transport.Kind
	}
	if gotKind != w.kind {
		t.Errorf("transport %q, want %q", gotKind, w.kind)
	}
	if m.OK == (m.ErrorClass != ClassNone) || (!m.OK && !strings.Contains(m.Error, " ")) {
		t.Errorf("ok=%v inconsistent with class %q / error %q", m.OK, m.ErrorClass, m.Error)
	}
}
