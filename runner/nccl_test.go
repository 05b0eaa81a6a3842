package runner

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestNCCLStandins runs each nccl-tests stand-in as the planner plans a
// one-endpoint job (-g GPUS, -J ${out}/nccl.json) and checks the report
// against the raw output and the JSON file the tool wrote into ${out}.
func TestNCCLStandins(t *testing.T) {
	standins(t)
	for _, bin := range []string{"all_reduce_perf", "alltoall_perf", "sendrecv_perf"} {
		t.Run(bin, func(t *testing.T) {
			p := oneLegPlan("nccl", 60, plan.PlannedCommand{Endpoint: "client-0", Role: tools.RoleRank, Parse: true,
				Argv: []string{bin, "-b", "1K", "-e", "256K", "-f", "4", "-g", "4", "-n", "5", "-c", "1", "-J", "${out}/nccl.json"}})
			sc := &scenarios.Scenario{Tests: []scenarios.Test{{Name: "t", Tool: "nccl",
				Expect: scenarios.Expect{MinBusBW: scenarios.Rate{Raw: "1KB/s"}}}}}
			out := t.TempDir()
			rep, err := Run(context.Background(), Config{Plan: p, Backend: local.New(), Scenario: sc, OutDir: out,
				Parse: func(_ string, r io.Reader) (parsers.Measurement, error) { return parseNCCL(r) }})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			r := rep.Results[0]
			if r.Verdict != schema.VerdictPass || len(r.Samples) != 5 || r.BestBps <= 0 || r.Stats[0].Metric != parsers.MetricBusBW {
				t.Fatalf("%s: %s; %d samples, best %v", r.Verdict, r.Reason, len(r.Samples), r.BestBps)
			}
			f, err := os.Open(filepath.Join(out, r.RawOutputs[0]))
			if err != nil {
				t.Fatal(err)
			}
			rows, _, err := ncclRows(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range r.Samples {
				if *s.BusBWBps != rows[s.Bytes]*8e9 {
					t.Errorf("size %d: report %v, raw %v GB/s", s.Bytes, *s.BusBWBps, rows[s.Bytes])
				}
			}
			checkNCCLJSON(t, filepath.Join(out, RawDir, sanitize(p.Rounds[0].Jobs[0].ID), "0-0-files", "nccl.json"), len(rows))
		})
	}
}

func checkNCCLJSON(t *testing.T, path string, rows int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("-J ${out}/nccl.json: %v", err)
	}
	var doc struct {
		Version int `json:"version"`
		Results []struct {
			Size int64 `json:"size"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Version != 3 || len(doc.Results) != rows {
		t.Errorf("nccl.json: version %d, %d results (want %d), %v", doc.Version, len(doc.Results), rows, err)
	}
}

// TestNCCLTwoProcessesLocal: a two-endpoint nccl job on the local backend
// is mpirun's local launch of two stand-in processes, one rank each, that
// bootstrap at NCCL_COMM_ID and move the bytes over TCP; rank 0's output
// lists both ranks (two pids) and is parsed.
func TestNCCLTwoProcessesLocal(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun missing (apt-get install openmpi-bin)")
	}
	standins(t)
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: nccl-local}
backend: local
pools:
  - {name: a, gpus: 1}
  - {name: b, gpus: 1}
tests:
  - name: sr
    tool: nccl
    from: a
    to: b
    requires: tcp
    args: {collective: sendrecv, minSize: 1KiB, maxSize: 4MiB, stepFactor: 4, iterations: 5}
    expect: {minBusBW: 1KB/s}
`
	rep, out := runLocalScenario(t, "nccl-local.yaml", text, 400)
	r := rep.Results[0]
	raw, _ := os.ReadFile(filepath.Join(out, r.RawOutputs[0]))
	t.Logf("%s\n%s", r.Commands[0], raw)
	if r.Verdict != schema.VerdictPass || len(r.Samples) != 7 || r.BestBps <= 0 {
		t.Fatalf("%s %q, %d samples", r.Verdict, r.Reason, len(r.Samples))
	}
	pids := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 6 && f[1] == "Rank" && f[5] == "Pid" {
			pids[f[6]] = true
		}
	}
	if len(pids) != 2 || !strings.Contains(r.Commands[0], "-H 127.0.0.1:2") || strings.Contains(r.Commands[0], "plm_rsh_agent") {
		t.Errorf("ranks %v; command %s", pids, r.Commands[0])
	}
}
