package plan

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rdmabench/rdmabench/scenarios"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./runner/plan -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; inspect with -update and git diff.\n--- got ---\n%s", path, got)
	}
}

// handBuilt are scenarios built in Go, covering every tool and pattern on
// the three backends.
func handBuilt() map[string]*scenarios.Scenario {
	gid := 3
	kube := scenario([]scenarios.Pool{
		{Name: "prefill", Replicas: intp(2), GPUs: scenarios.GPUs(1)},
		{Name: "decode", Replicas: intp(2), GPUs: scenarios.GPUs(1)},
	},
		scenarios.Test{Name: "rping", Tool: "rping", From: "decode", To: "prefill", Args: scenarios.Args{Count: 10}},
		scenarios.Test{Name: "write-bw", Tool: "ib_write_bw", From: "decode", To: "prefill", Pattern: "pairwise",
			Args: scenarios.Args{Sizes: []scenarios.Size{size("64KiB"), size("1MiB")}, QPs: 4, Duration: dur("10s")}},
		scenarios.Test{Name: "kv-read", Tool: "nixlbench", From: "decode", To: "prefill",
			Args: scenarios.Args{Backends: []string{"UCX", "UCCL"}, Op: "READ", InitiatorSeg: "VRAM", TargetSeg: "VRAM",
				MinSize: size("4KiB"), MaxSize: size("64MiB"), Iterations: 1000}},
		scenarios.Test{Name: "nccl-sendrecv", Tool: "nccl", From: "decode", To: "prefill",
			Args: scenarios.Args{Collective: "sendrecv", MinSize: size("1MiB"), MaxSize: size("1GiB"), StepFactor: 2}},
	)
	kube.Metadata.Name = "kube-pd"
	kube.Backend = scenarios.BackendKube
	kube.Defaults = scenarios.Defaults{Device: "mlx5_0", GIDIndex: &gid, Env: map[string]string{"NCCL_DEBUG": "WARN", "UCX_LOG_LEVEL": "warn"}}

	local := scenario([]scenarios.Pool{{Name: "a", Replicas: intp(1), Devices: []string{"rxe0"}}, {Name: "b", Replicas: intp(1), Devices: []string{"rxe1"}}},
		scenarios.Test{Name: "write-bw", Tool: "ib_write_bw", From: "a", To: "b", Args: scenarios.Args{Sizes: []scenarios.Size{size("4KiB"), size("64KiB")}, Duration: dur("3s")}},
		scenarios.Test{Name: "read-lat", Tool: "ib_read_lat", From: "a", To: "b", Args: scenarios.Args{Iterations: 1000}},
		scenarios.Test{Name: "sweep", Tool: "ib_send_bw", From: "a", To: "b", Args: scenarios.Args{Sweep: true, Bidirectional: true}},
		scenarios.Test{Name: "ucx-tcp", Tool: "ucx_perftest", From: "a", To: "b", Args: scenarios.Args{Test: "tag_bw", Transports: "tcp", Sizes: []scenarios.Size{size("64KiB")}, Iterations: 2000}},
		scenarios.Test{Name: "iperf3", Tool: "iperf3", From: "a", To: "b", Args: scenarios.Args{Duration: dur("3s"), Streams: 2}},
		scenarios.Test{Name: "nccl-local", Tool: "nccl", From: "a", Args: scenarios.Args{Collective: "all_reduce"}},
	)
	local.Metadata.Name = "local-all-tools"

	ssh := scenario([]scenarios.Pool{{Name: "ep", Replicas: intp(5), Hosts: []string{"n1", "n2", "n3"}, Devices: []string{"mlx5_0", "mlx5_1"}}},
		scenarios.Test{Name: "ring", Tool: "ib_write_bw", From: "ep", Pattern: "ring", Args: scenarios.Args{Sizes: []scenarios.Size{size("1MiB")}}},
		scenarios.Test{Name: "a2a", Tool: "ucx_perftest", From: "ep", Pattern: "all-to-all", Args: scenarios.Args{Transports: "rc,self", Sizes: []scenarios.Size{size("1MiB")}}},
		scenarios.Test{Name: "incast", Tool: "ib_write_bw", From: "ep", Pattern: "many-to-one", Args: scenarios.Args{QPs: 2}},
	)
	ssh.Metadata.Name = "ssh-ring"
	ssh.Backend = scenarios.BackendSSH
	ssh.Hosts = []scenarios.Host{{Name: "n1", Address: "10.0.0.1", DataAddress: "192.168.0.1"}, {Name: "n2", Address: "10.0.0.2", DataAddress: "192.168.0.2"}, {Name: "n3", Address: "10.0.0.3"}}
	return map[string]*scenarios.Scenario{"kube-pd": kube, "local-all-tools": local, "ssh-ring": ssh}
}

func TestGoldenHandBuiltPlans(t *testing.T) {
	for name, s := range handBuilt() {
		t.Run(name, func(t *testing.T) {
			p, err := Compile(s, CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var js, table, summary bytes.Buffer
			if err := WriteJSON(&js, p); err != nil {
				t.Fatal(err)
			}
			if err := WriteTable(&table, p); err != nil {
				t.Fatal(err)
			}
			if err := WriteSummary(&summary, p); err != nil {
				t.Fatal(err)
			}
			golden(t, "plans/"+name+".json", js.Bytes())
			golden(t, "plans/"+name+".txt", table.Bytes())
			golden(t, "plans/"+name+".summary.txt", summary.Bytes())
		})
	}
}

func TestGoldenYAMLMatchesJSON(t *testing.T) {
	p, err := Compile(handBuilt()["kube-pd"], CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var y bytes.Buffer
	if err := WriteYAML(&y, p); err != nil {
		t.Fatal(err)
	}
	golden(t, "plans/kube-pd.yaml", y.Bytes())

	// The YAML reads back as the same document as the JSON.
	var fromYAML any
	if err := yaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	viaYAML, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(viaYAML, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("YAML and JSON plans differ:\n%s\n%s", viaYAML, js.Bytes())
	}
}

// WriteYAML streams field by field and round by round; its document is
// still the whole JSON document re-encoded at once, byte for byte, for
// every hand-built plan, a sampled one (samples), and one that skips.
func TestYAMLStreamsTheWholeDocument(t *testing.T) {
	plans := map[string]*Plan{"sampled": sampledPlan(t, []scenarios.Pool{pool("ep", 9)}, "", 2, 7)}
	for name, s := range handBuilt() {
		p, err := Compile(s, CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		plans[name] = p
	}
	one := scenario([]scenarios.Pool{pool("ep", 1)}, scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "ep", Pattern: "all-to-all"})
	p, err := Compile(one, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Skipped) == 0 || p.NumRounds() != 0 {
		t.Fatalf("one endpoint: %d skipped, %d rounds; want a plan that skips its only test", len(p.Skipped), p.NumRounds())
	}
	plans["skips"] = p
	for name, p := range plans {
		var js, whole, streamed bytes.Buffer
		if err := WriteJSON(&js, p); err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(js.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		blockStyle(&doc)
		enc := yaml.NewEncoder(&whole)
		enc.SetIndent(2)
		if err := enc.Encode(&doc); err != nil {
			t.Fatal(err)
		}
		if err := WriteYAML(&streamed, p); err != nil {
			t.Fatal(err)
		}
		if streamed.String() != whole.String() {
			t.Errorf("%s: the streamed YAML differs from the whole document's:\n%s", name, lineDiff(whole.String(), streamed.String()))
		}
	}
}

// lineDiff names the first line where got leaves want.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, w[i], g[i])
		}
	}
	return fmt.Sprintf("lengths: want %d lines, got %d", len(w), len(g))
}
