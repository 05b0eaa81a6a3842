package e2egpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestCapturedTwoGPUFidelity replays the lane's checks on the committed
// two-H200 capture (testdata/gpu/h200-2gpu, no GPU needed): rdmabench's
// report against the raw nccl-tests runs of the same session, for the
// one-process (-g 2) scenario and the mpirun (one process per GPU) one.
func TestCapturedTwoGPUFidelity(t *testing.T) {
	dir := "../../testdata/gpu/h200-2gpu"
	for _, c := range []struct {
		scenario, run string
		raw           map[string]string // test → raw output
	}{
		{"scenario.yaml", "rdmabench", map[string]string{
			"all-reduce": "raw-all-reduce.txt", "alltoall": "raw-alltoall.txt", "sendrecv": "raw-sendrecv.txt"}},
		{"mpi/rdmabench/scenario.yaml", "mpi/rdmabench", map[string]string{
			"sendrecv-mpi": "mpi/raw-sendrecv.txt", "all-reduce-mpi": "mpi/raw-all_reduce.txt"}},
	} {
		s, err := scenarios.Load(filepath.Join(dir, c.scenario))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := schema.Load(filepath.Join(dir, c.run, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sum strings.Builder
		for _, st := range s.Tests {
			res := findResult(rep, st.Name)
			if res == nil {
				t.Fatalf("%s: no result", st.Name)
			}
			// The report predates the p2p transport kind: read the
			// transport again from rdmabench's own raw output.
			out, err := os.ReadFile(filepath.Join(dir, c.run, res.RawOutputs[0]))
			if err != nil {
				t.Fatal(err)
			}
			res.Transport = parsers.DetectTransport(string(out))
			raw, err := os.ReadFile(filepath.Join(dir, c.raw[st.Name]))
			if err != nil {
				t.Fatal(err)
			}
			ms, err := parsers.ParseNCCL(strings.NewReader(string(raw)))
			if err != nil || len(ms) != 1 {
				t.Fatalf("%s: %v", c.raw[st.Name], err)
			}
			if res.Transport == nil || res.Transport.Kind != parsers.TransportP2P {
				t.Errorf("%s: transport %s, want p2p", st.Name, transport(res.Transport))
			}
			compare(t, &sum, &st, res, ms[0], 0)
		}
		t.Log("\n" + sum.String())
	}
}
