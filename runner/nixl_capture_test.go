package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/pathproof"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// TestNixlPathProofOnVMsCapture replays the real nixlbench run between the
// soft-RoCE VMs (testdata/nixl/softroce-vms-ssh, and softroce-vms-kube on
// the VMs as kube nodes): UCX read remote memory
// over rc_verbs by copy-out, in 8256-byte segments of two full packets and
// a short one each, for 32 iterations and 16 of warm-up per block size. The
// rxe counters of both VMs are within the rule of what that moved; counted
// as whole messages at the MTU without the warm-up (what the proof did
// before), they were 2.26 times too many.
func TestNixlPathProofOnVMsCapture(t *testing.T) {
	for _, where := range []string{"softroce-vms-ssh", "softroce-vms-kube"} {
		t.Run(where, func(t *testing.T) { nixlPathProofOfCapture(t, "../testdata/nixl/"+where+"/rdmabench") })
	}
}

func nixlPathProofOfCapture(t *testing.T, dir string) {
	rep, err := schema.Load(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Skipf("no capture: %v", err)
	}
	var ucx *schema.Result
	for i := range rep.Results {
		if rep.Results[i].Backend == "UCX" {
			ucx = &rep.Results[i]
		}
	}
	if ucx == nil || ucx.Path == nil || len(ucx.Path.Endpoints) != 2 {
		t.Fatalf("no UCX result with counters in the capture")
	}
	raw, err := os.Open(filepath.Join(dir, ucx.RawOutputs[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	m, err := DefaultParse("nixlbench", raw)
	if err != nil || !m.OK || m.Transport == nil || !m.Transport.Copy {
		t.Fatalf("parse: %v ok=%v transport %+v", err, m.OK, m.Transport)
	}
	var want, old pathproof.Expect
	for _, s := range m.Samples {
		old.Bytes += s.Bytes * 32
		old.Packets += (s.Bytes + 4095) / 4096 * 32
		n := tools.WireMessages("nixlbench", &m, &s, 32)
		if n != 48 {
			t.Errorf("%d B: %d messages on the wire, want 32 + 16 of warm-up", s.Bytes, n)
		}
		want.Bytes += s.Bytes * n
		want.Packets += pathproof.PacketsForSegments(s.Bytes, n, 4096, tools.UCXSegSize(nil))
	}
	proof := pathproof.Verify(ucx.Path.Endpoints, want)
	if !proof.Verified || proof.Invalid {
		t.Errorf("the capture's counters against %d packets: %s", want.Packets, proof.Detail)
	}
	if ucx.Path.ToolPackets != want.Packets {
		t.Errorf("the run recorded %d packets expected, this model %d", ucx.Path.ToolPackets, want.Packets)
	}
	if p := pathproof.Verify(ucx.Path.Endpoints, old); p.Verified {
		t.Errorf("the old model (%d packets) verified too: the test proves nothing", old.Packets)
	}
	t.Logf("expected %d packets; %s", want.Packets, proof.Detail)
}

// TestNixlCapturesReparse replays every real nixlbench run recorded under
// testdata/nixl: the initiator's raw output, parsed again, gives the
// figures and the transport its report.json holds.
func TestNixlCapturesReparse(t *testing.T) {
	reports, _ := filepath.Glob("../testdata/nixl/*/rdmabench/report.json")
	if len(reports) == 0 {
		t.Skip("no nixlbench captures")
	}
	for _, path := range reports {
		rep, err := schema.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(path)
		for _, r := range rep.Results {
			t.Run(filepath.Base(filepath.Dir(dir))+"/"+r.Test, func(t *testing.T) {
				file, program := r.RawOutputs[0], "nixlbench"
				for _, f := range r.RawOutputs {
					if strings.HasSuffix(f, "-initiator.out") {
						file = f // the side whose output holds the table
					}
				}
				if r.Program != "" {
					program = r.Program // the NIXL probe
				}
				raw, err := os.Open(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				defer raw.Close()
				m, err := DefaultParse(program, raw)
				if err != nil || !m.OK {
					t.Fatalf("parse: %v ok=%v", err, m.OK)
				}
				if len(m.Samples) != len(r.Samples) {
					t.Fatalf("%d sizes; the report has %d", len(m.Samples), len(r.Samples))
				}
				for i, s := range m.Samples {
					if s.Bytes != r.Samples[i].Bytes || *s.BWAvgBps != *r.Samples[i].BWAvgBps {
						t.Errorf("size %d: %d B at %v b/s; the report: %d B at %v b/s", i, s.Bytes, *s.BWAvgBps, r.Samples[i].Bytes, *r.Samples[i].BWAvgBps)
					}
				}
				// The kind and devices are the report's; the detail now
				// names the op's own path in UCX's tables (parsers.UCXPathKey).
				if m.Transport == nil || r.Transport == nil || m.Transport.Kind != r.Transport.Kind ||
					strings.Join(m.Transport.Devices, ",") != strings.Join(r.Transport.Devices, ",") {
					t.Errorf("transport %+v; the report: %+v", m.Transport, r.Transport)
				}
				if r.Transport.Source == "ucx" && !strings.Contains(m.Transport.Detail, "("+r.Op+" host") {
					t.Errorf("transport detail %q does not name the %s path", m.Transport.Detail, r.Op)
				}
			})
		}
	}
}
