package tools

import (
	"slices"
	"strings"
	"testing"
)

// TestUCXPerftestPath: the RMA op and buffer memories a ucx_perftest client
// command times, as UCX's protocol tables name them.
func TestUCXPerftestPath(t *testing.T) {
	for argv, want := range map[string]struct {
		op   string
		mems []string
	}{
		"ucx_perftest 10.0.0.1 -p 13337 -t ucp_get -s 16777216 -n 200 -m cuda": {"READ", []string{"cuda"}},
		"ucx_perftest 10.0.0.1 -t ucp_put_bw -m cuda,host":                     {"WRITE", []string{"cuda", "host"}},
		"ucx_perftest 10.0.0.1 -t ucp_put_lat -m cuda,cuda":                    {"WRITE", []string{"cuda"}},
		"ucx_perftest 10.0.0.1 -t ucp_get":                                     {"READ", []string{"host"}},
		"ucx_perftest 10.0.0.1 -t tag_bw -m cuda":                              {"", []string{"cuda"}},
		"ucx_perftest 10.0.0.1 -t":                                             {"", []string{"host"}},
	} {
		op, mems := UCXPerftestPath(strings.Fields(argv))
		if op != want.op || !slices.Equal(mems, want.mems) {
			t.Errorf("%s: %q %v, want %q %v", argv, op, mems, want.op, want.mems)
		}
	}
}
