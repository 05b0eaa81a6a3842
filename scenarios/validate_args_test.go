package scenarios

import (
	"strings"
	"testing"
)

// Arguments the tools themselves refuse are refused at load time, with the
// tool's own limit in the hint, so a run does not fail on the cluster.
func TestArgLimits(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"{qps: 16384}", ""},
		{"{qps: 16385}", "t.yaml:10:62: tests[0].args.qps: 16385 queue pairs is too many (perftest -q accepts at most 16384)"},
		{"{qps: 0}", "t.yaml:10:62: tests[0].args.qps: must be at least 1, not 0 (perftest -q: queue pairs per process, 1–16384)"},
		{"{qps: 99999999999999999999}", "t.yaml:10:62: tests[0].args.qps: 99999999999999999999 is too large (write a smaller whole number, like 4)"},
	} {
		_, err := LoadBytes("t.yaml", []byte(minimal+"  - {name: t, tool: ib_write_bw, from: a, to: b, args: "+c.args+"}\n"))
		if got := strings.TrimSpace(errText(err)); got != c.want {
			t.Errorf("args %s:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
