package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/report/schema"
)

// TestPreflightLocalNoRDMA: on a host without RDMA, preflight names the
// rdma-device failure on each endpoint of the RDMA tests, the reason they
// are skipped, and exits 0 as run does (loopback's RDMA tests are
// requires: rdma, skipped by design there); the binaries of those tests
// are no failures of their own (skip); -o json is the report.json
// preflight section.
func TestPreflightLocalNoRDMA(t *testing.T) {
	if nic.HasRDMA("/") {
		t.Skip("this host has RDMA")
	}
	var stdout, stderr bytes.Buffer
	code := runWith([]string{"preflight", "../../scenarios/loopback.yaml"}, nil, &stdout, &stderr)
	if code != 0 || strings.Contains(stdout.String(), "FAIL      │ a-0      │ binary-") || !strings.Contains(stdout.String(), "rdma-device") || !strings.Contains(stdout.String(), "no RDMA device under /sys/class/infiniband") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	code = runWith([]string{"preflight", "../../scenarios/loopback.yaml", "-o", "json"}, nil, &stdout, &stderr)
	var doc struct {
		Preflight []schema.PreflightEndpoint `json:"preflight"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || code != 0 || len(doc.Preflight) == 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, stdout.String())
	}
	c := doc.Preflight[0].Checks[0]
	if c.ID != "rdma-device" || c.Status != schema.PreflightFail || c.Dooms != schema.DoomsRDMA || c.Fix == "" {
		t.Fatalf("%+v", c)
	}
}

func TestPreflightBadOutput(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runWith([]string{"preflight", "../../scenarios/loopback.yaml", "-o", "yaml"}, nil, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d", code)
	}
}

// TestPreflightMissingToolOfARunningTest: a tool whose test would run is
// missing (nixlbench over TCP needs no RDMA device): exit 1.
func TestPreflightMissingToolOfARunningTest(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir+":/usr/bin:/bin")
	p := filepath.Join(dir, "kv.yaml")
	if err := os.WriteFile(p, []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: kv}
backend: local
pools: [{name: a}, {name: b}]
tests:
  - {name: kv, tool: nixlbench, from: a, to: b, args: {transports: tcp}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runWith([]string{"preflight", p}, nil, &stdout, &stderr); code != 1 || !strings.Contains(stdout.String(), "binary-nixlbench") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}
