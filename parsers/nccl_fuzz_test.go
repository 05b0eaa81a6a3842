package parsers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ncclFuzzSeeds adds the recorded captures and, when the shared folder is
// beside the repository, the corpus files of the given tools.
func ncclFuzzSeeds(f *testing.F, globs ...string) {
	var paths []string
	for _, g := range globs {
		if strings.HasPrefix(g, "corpus:") {
			shared, err := ncclFindShared()
			if err != nil || shared == "" {
				continue
			}
			g = filepath.Join(shared, "corpus", strings.TrimPrefix(g, "corpus:"))
		}
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(ncclHead + ncclRowText(1024, 1.5, "0", "N/A") + ncclFoot))
}

// ncclCheckInvariants holds for every input: at least one measurement,
// ok exactly when there is no class, an error text on failure, and a value
// that marshals to JSON (no NaN or Inf slipped through).
func ncclCheckInvariants(t *testing.T, ms []Measurement, err error) {
	if err != nil {
		t.Fatalf("error from an in-memory reader: %v", err)
	}
	if len(ms) == 0 {
		t.Fatal("no measurement")
	}
	for _, m := range ms {
		if m.OK != (m.ErrorClass == ClassNone) || (!m.OK && m.Error == "") || m.Samples == nil {
			t.Fatalf("inconsistent measurement: ok=%v class=%q error=%q samples nil=%v", m.OK, m.ErrorClass, m.Error, m.Samples == nil)
		}
	}
	if _, err := json.Marshal(ms); err != nil {
		t.Fatalf("measurements do not marshal: %v", err)
	}
}

func FuzzParseNCCL(f *testing.F) {
	ncclFuzzSeeds(f, filepath.Join(ncclCaptureDir, "*.txt"), filepath.Join(ncclCaptureDir, "*.json"), "corpus:nccl-tests/*.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseNCCL(strings.NewReader(string(data)))
		ncclCheckInvariants(t, ms, err)
	})
}

func FuzzParseNCCLJSON(f *testing.F) {
	ncclFuzzSeeds(f, filepath.Join(ncclCaptureDir, "*.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseNCCLJSON(data)
		ncclCheckInvariants(t, ms, err)
	})
}

func FuzzParseNixlbench(f *testing.F) {
	ncclFuzzSeeds(f, "corpus:nixlbench/*.txt")
	f.Add([]byte(nixlConfigBlock("UCX", "READ", 4096, 8192, 1, 2) + nixlHeader(true) + nixlRow(4096, 1, 1.5, []float64{3, 3}, 2.7)))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseNixlbench(strings.NewReader(string(data)))
		ncclCheckInvariants(t, ms, err)
	})
}

func FuzzDetectTransport(f *testing.F) {
	ncclFuzzSeeds(f, filepath.Join(ncclCaptureDir, "*debug_info*.txt"), "corpus:nixlbench/new_format*.txt")
	f.Add([]byte("h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB eth0:10.0.0.1<0>\nh:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := DetectTransport(string(data))
		if tr == nil {
			return
		}
		switch tr.Kind {
		case TransportRDMA, TransportTCP, TransportShm, TransportP2P, TransportNone, TransportUnknown:
		default:
			t.Fatalf("kind %q", tr.Kind)
		}
		if len(tr.Evidence) > maxEvidence+maxChannelEvidence {
			t.Fatalf("%d evidence lines", len(tr.Evidence))
		}
		if _, err := json.Marshal(tr); err != nil {
			t.Fatal(err)
		}
	})
}
