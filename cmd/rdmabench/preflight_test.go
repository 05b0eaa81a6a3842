package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/report/schema"
)

// TestPreflightLocalNoRDMA: on a host without RDMA, preflight names the
// rdma-device failure on each endpoint of the RDMA tests and exits 1;
// -o json is the report.json preflight section.
func TestPreflightLocalNoRDMA(t *testing.T) {
	if nic.HasRDMA("/") {
		t.Skip("this host has RDMA")
	}
	var stdout, stderr bytes.Buffer
	code := runWith([]string{"preflight", "../../scenarios/loopback.yaml"}, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "rdma-device") || !strings.Contains(stdout.String(), "no RDMA device under /sys/class/infiniband") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	code = runWith([]string{"preflight", "../../scenarios/loopback.yaml", "-o", "json"}, nil, &stdout, &stderr)
	var doc struct {
		Preflight []schema.PreflightEndpoint `json:"preflight"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || code != 1 || len(doc.Preflight) == 0 {
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
