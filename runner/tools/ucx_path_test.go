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

// TestUCXPerftestSize: -s N and -sN, the last wins; a scatter list or no
// -s is no one size.
func TestUCXPerftestSize(t *testing.T) {
	for argv, want := range map[string]int64{
		"10.0.0.2 -t ucp_get -s 1048576": 1048576,
		"-s65536 -t tag_bw":              65536,
		"-s 8 -s 4096":                   4096,
		"-t ucp_put_bw -s 1024,2048":     0,
		"-t ucp_get":                     0,
		"-t ucp_get -s":                  0,
	} {
		if got := UCXPerftestSize(strings.Fields(argv)); got != want {
			t.Errorf("%q: %d, want %d", argv, got, want)
		}
	}
}
