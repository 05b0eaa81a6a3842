package scenarios

import (
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3},
		{"decode", "decode", 0}, {"decod", "decode", 1}, {"prefil", "prefill", 1},
		{"kitten", "sitting", 3}, {"UCX", "ucx", 0}, {"ib_wirte_bw", "ib_write_bw", 2},
		{"replicaz", "replicas", 1}, {"naïve", "naive", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNearestAndSuggest(t *testing.T) {
	pools := []string{"prefill", "decode"}
	for _, c := range []struct{ word, want string }{
		{"decod", "decode"}, {"prefil", "prefill"}, {"DECODE", "decode"},
		{"xyz", ""}, {"", ""}, {"pre", ""},
	} {
		if got := nearest(c.word, pools); got != c.want {
			t.Errorf("nearest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := suggest("decod", "pools", pools); got != `did you mean "decode"? pools are: prefill, decode` {
		t.Errorf("suggest: %s", got)
	}
	if got := suggest("zzz", "pools", pools); got != "pools are: prefill, decode" {
		t.Errorf("suggest without a near one: %s", got)
	}
	if got := suggest("a", "pools", nil); got != "there are no pools" {
		t.Errorf("suggest with none: %s", got)
	}
}

// TestToolSuggestion: the names people type for a tool (its family, its
// package, its binary, a part of it) lead to the scenario's tool name.
func TestToolSuggestion(t *testing.T) {
	for _, c := range []struct{ word, want string }{
		{"iperf", `did you mean "iperf3"?`},
		{"ib-write-bw", `did you mean "ib_write_bw"?`},
		{"write_bw", `did you mean "ib_write_bw"?`},
		{"read_lat", `did you mean "ib_read_lat"?`},
		{"nccl-tests", `did you mean "nccl"? (nccl-tests: tool: nccl with args.collective, or the binary name such as all_reduce_perf)`},
		{"nccl_tests", `did you mean "nccl"?`},
		{"perftest", `did you mean "ib_write_bw"? (perftest is the package: name one of its tools, ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_read_lat, ib_send_lat)`},
		{"ucx", `did you mean "ucx_perftest"?`},
		{"nixl", `did you mean "nixlbench"?`},
		{"UCX_PERFTEST", `did you mean "ucx_perftest"?`},
	} {
		got := ToolSuggestion(c.word)
		if len(got) < len(c.want) || got[:len(c.want)] != c.want {
			t.Errorf("ToolSuggestion(%q) = %q, want it to start with %q", c.word, got, c.want)
		}
	}
	if got := ToolSuggestion("zzzz"); got != "tools are: "+strings.Join(Tools, ", ") || !strings.HasPrefix(got, "tools are: ib_write_bw, ib_read_bw") {
		t.Errorf("no near tool: %q", got)
	}
}

func TestNearestSubstring(t *testing.T) {
	known := []string{"ib_write_bw", "ib_read_bw", "iperf3"}
	for _, c := range []struct{ word, want string }{
		{"write_bw", "ib_write_bw"}, {"read_bw", "ib_read_bw"}, {"bw", ""}, {"ib_", ""},
	} {
		if got := Nearest(c.word, known); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

// Names as people say them: a tool's words spelled out (bandwidth for
// bw, latency for lat), a backend by what it runs on.
func TestSuggestionsForSpelledOutNames(t *testing.T) {
	for word, want := range map[string]string{
		"ib_write_bandwidth": `did you mean "ib_write_bw"?`, "ib_send_latency": `did you mean "ib_send_lat"?`,
	} {
		if got := ToolSuggestion(word); !strings.HasPrefix(got, want) {
			t.Errorf("ToolSuggestion(%q) = %s, want %s…", word, got, want)
		}
	}
	for word, want := range map[string]string{"kubernetes": "kube", "k8s": "kube", "openshift": "kube", "localhost": "local"} {
		if got := suggest(word, "backends", Backends); !strings.HasPrefix(got, `did you mean "`+want+`"?`) {
			t.Errorf("suggest(%q) = %s, want %s", word, got, want)
		}
	}
}
