package tools

import (
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/tool"
)

// TestNixlProbeMessagesAsNixlbench: with --as-nixlbench the probe divides
// its warm-up too by the large-block factor over 1 MiB (16 become 1), so
// a 4 MiB row put 256/16 timed + 1 warm-up + 1 checked requests on the
// wire, not 16 warm-ups; below 1 MiB, and without the flag, all 16.
func TestNixlProbeMessagesAsNixlbench(t *testing.T) {
	info := func(loop string) map[string]string {
		return map[string]string{"num_iter": "256", "warmup_iter": "16", "large_blk_iter_ftr": "16",
			"check_consistency": "1", "as_nixlbench": loop}
	}
	for _, c := range []struct {
		loop  string
		bytes int64
		want  int64
	}{
		{"nixlbench's", 4 << 20, 16 + 1 + 1},
		{"nixlbench's", 1 << 20, 256 + 16 + 1},
		{"rdmabench's", 4 << 20, 16 + 16 + 1},
		{"", 4 << 20, 16 + 16 + 1}, // a capture from before the row
	} {
		m := parsers.Measurement{Info: info(c.loop)}
		s := parsers.Sample{Bytes: c.bytes, Batch: 1}
		if got := WireMessages(tool.NixlProbe, &m, &s, 0); got != c.want {
			t.Errorf("%q %d B: %d messages, want %d", c.loop, c.bytes, got, c.want)
		}
	}
}

// TestNixlProbeMessagesCheckedWrite: a WRITE row's data check posts three
// requests (zeros written, the pattern written, read back), a READ's one.
func TestNixlProbeMessagesCheckedWrite(t *testing.T) {
	for op, want := range map[string]int64{"READ": 8 + 2 + 1, "WRITE": 8 + 2 + 3} {
		m := parsers.Measurement{Op: op, Info: map[string]string{"num_iter": "8", "warmup_iter": "2", "check_consistency": "1"}}
		s := parsers.Sample{Bytes: 4096, Batch: 2}
		if got := WireMessages(tool.NixlProbe, &m, &s, 0); got != 2*want {
			t.Errorf("%s: %d messages, want %d", op, got, 2*want)
		}
	}
}

// TestNixlProbeTimeLimitFollowsTheTest: a test's timeout longer than the
// table's allowance for its sweep is the probe's own limit too; a shorter
// one leaves the allowance.
func TestNixlProbeTimeLimitFollowsTheTest(t *testing.T) {
	for timeout, want := range map[string]string{"30m": "1800", "": "80", "10s": "80"} {
		test := scenarios.Test{Tool: tool.NixlProbe, Args: scenarios.Args{MinSize: sz("16MiB"), MaxSize: sz("16MiB"), Iterations: 1000000}}
		if timeout != "" {
			d, err := time.ParseDuration(timeout)
			if err != nil {
				t.Fatal(err)
			}
			test.Timeout = scenarios.Duration{Raw: timeout, Value: d}
		}
		a, b := endpoint.Endpoint{Name: "decode-0"}, endpoint.Endpoint{Name: "prefill-0"}
		for _, c := range build(t, test, Leg{Client: a, Server: b, Group: "g"}) {
			i := slices.Index(c.Argv, "--time-limit")
			if i < 0 || c.Argv[i+1] != want {
				t.Errorf("timeout %q, %s: %s, want --time-limit %s", timeout, c.Role, strings.Join(c.Argv, " "), want)
			}
		}
	}
}
