package parsers

import "testing"

func TestCleanLine(t *testing.T) {
	cases := map[string]string{
		"   [1,0]<stdout>:#       size  count\r":        "#       size  count",
		"0:            8             2     float":       "           8             2     float",
		"[2026-07-28T10:17:17.743Z] Connecting to ETCD": "Connecting to ETCD",
		"[0]      1048576        262144     float":      "      1048576        262144     float",
		"[0] #  Rank  0":          " #  Rank  0",
		" #bytes     #iterations": " #bytes     #iterations",
		"[thread 0]  12 3":        "[thread 0]  12 3",
		"12:30 is not a label":    "12:30 is not a label",
	}
	for in, want := range cases {
		if got := CleanLine(in); got != want {
			t.Errorf("CleanLine(%q) = %q, want %q", in, got, want)
		}
	}
}
