package parsers

import (
	"encoding/json"
	"testing"
)

// TestJSONNamesFixedByIssue pins the JSON names issue 3 says scripts and
// checks rely on: a measurement with every one of them set must marshal
// them under exactly these keys (and a failed one must keep "samples").
func TestJSONNamesFixedByIssue(t *testing.T) {
	one, pings := int64(1), 3
	m := Measurement{Tool: "t", ErrorClass: ClassTimeout, Error: "e", Op: "READ", Backend: "UCX", Pings: &pings,
		AvgBusBWBps: F(1), Transport: &Transport{Kind: TransportRDMA},
		Samples: []Sample{{Bytes: 8, BWAvgBps: F(1), BWPeakBps: F(2), MsgRatePPS: F(3), LatMinUS: F(4),
			LatAvgUS: F(5), LatMaxUS: F(6), LatP99US: F(7), LatP999US: F(8), AlgBWBps: F(9), BusBWBps: F(10),
			InplaceAlgBWBps: F(11), InplaceBusBWBps: F(12), Wrong: &one}}}
	var got map[string]json.RawMessage
	b, _ := json.Marshal(m)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var samples []map[string]json.RawMessage
	if err := json.Unmarshal(got["samples"], &samples); err != nil || len(samples) != 1 {
		t.Fatalf("samples = %s: %v", got["samples"], err)
	}
	want := map[string]string{"tool": `"t"`, "ok": "false", "error_class": `"timeout"`, "op": `"READ"`,
		"backend": `"UCX"`, "pings": "3", "avg_busbw_bps": "1", "transport": `{"kind":"rdma"}`}
	for k, v := range want {
		if string(got[k]) != v {
			t.Errorf("measurement %q = %s, want %s", k, got[k], v)
		}
	}
	sample := map[string]string{"bytes": "8", "bw_avg_bps": "1", "bw_peak_bps": "2", "msg_rate_pps": "3",
		"lat_min_us": "4", "lat_avg_us": "5", "lat_max_us": "6", "lat_p99_us": "7", "lat_p999_us": "8",
		"algbw_bps": "9", "busbw_bps": "10", "inplace_algbw_bps": "11", "inplace_busbw_bps": "12", "wrong": "1"}
	for k, v := range sample {
		if string(samples[0][k]) != v {
			t.Errorf("sample %q = %s, want %s", k, samples[0][k], v)
		}
	}
	b, _ = json.Marshal(Measurement{Tool: "t", Samples: []Sample{}})
	if string(b) != `{"tool":"t","ok":false,"samples":[]}` {
		t.Errorf("bare failed measurement = %s", b)
	}
}
