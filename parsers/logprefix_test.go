package parsers

import "testing"

func TestStripLogPrefix(t *testing.T) {
	cases := map[string]string{
		"07:52:39 DEBUG| [stderr]  Bidirectional is only available in BW test": " Bidirectional is only available in BW test",
		"07:52:39 INFO | Running 'timeout 600 ib_read_lat'":                    "Running 'timeout 600 ib_read_lat'",
		"2026-07-28 10:17:18,674  65536      5000     1.00":                    "65536      5000     1.00",
		"2026-07-28T10:17:18.674Z ping data: rdma-ping-0: A":                   "ping data: rdma-ping-0: A",
		" 65536      5000             11030.78":                                " 65536      5000             11030.78",
		"12:30:45is not a stamp":                                               "12:30:45is not a stamp",
		"20000,5.942,26.423":                                                   "20000,5.942,26.423",
	}
	for in, want := range cases {
		if got := stripLogPrefix(in); got != want {
			t.Errorf("stripLogPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}
