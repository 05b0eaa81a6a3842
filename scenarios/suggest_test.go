package scenarios

import "testing"

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
