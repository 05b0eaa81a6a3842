package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// TestNixlProbeCaptureReplays: the real NIXL probe's outputs (testdata/nixl/
// local-probe: NIXL 8770b655a, UCX 1.22.0, two local processes) parse as the
// probe's (program, UCX version, READ, 7 sizes, UCX's evidence: shm), and
// each size's bandwidth equals what rdmabench's report says of it.
func TestNixlProbeCaptureReplays(t *testing.T) {
	dir := filepath.Join("..", "testdata", "nixl", "local-probe", "rdmabench")
	rep, err := schema.Load(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range rep.Results {
		if r.Tool != "nixl_probe" {
			continue
		}
		seen++
		var out []byte
		for _, f := range r.RawOutputs {
			if strings.HasSuffix(f, "-initiator.out") {
				out, err = os.ReadFile(filepath.Join(dir, f))
			}
		}
		if err != nil || out == nil {
			t.Fatal(err)
		}
		ms, err := parsers.Parse("rdmabench-nixl", strings.NewReader(string(out)))
		if err != nil || len(ms) != 1 || !ms[0].OK {
			t.Fatalf("%s: %v %+v", r.Test, err, ms)
		}
		m := ms[0]
		if m.Tool != "rdmabench-nixl" || m.Info["ucx"] != "1.22.0" || m.Op != "READ" || len(m.Samples) != 7 ||
			m.Transport == nil || m.Transport.Kind != "shm" {
			t.Errorf("%s: tool %q ucx %q op %q, %d sizes, transport %+v", r.Test, m.Tool, m.Info["ucx"], m.Op, len(m.Samples), m.Transport)
		}
		if r.Program != "rdmabench-nixl" || r.Libraries["ucx"] != "1.22.0" {
			t.Errorf("%s: report says program %q libraries %v", r.Test, r.Program, r.Libraries)
		}
		for i, s := range m.Samples {
			if i >= len(r.Samples) || s.BWAvgBps == nil || r.Samples[i].BWAvgBps == nil || *s.BWAvgBps != *r.Samples[i].BWAvgBps {
				t.Errorf("%s size %d: parsed %v, report %v", r.Test, s.Bytes, s.BWAvgBps, r.Samples[i].BWAvgBps)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d probe results in the capture, want 2", seen)
	}
}
