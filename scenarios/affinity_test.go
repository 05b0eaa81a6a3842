package scenarios

import (
	"strings"
	"testing"
)

// expect.affinity is the farthest GPU↔NIC relation a test accepts, one of
// nvidia-smi topo -m's (PIX, PXB, PHB, NODE, SYS).
func TestExpectAffinity(t *testing.T) {
	for _, c := range []struct{ expect, want string }{
		{"{affinity: PXB}", ""},
		{"{affinity: SYS}", ""},
		{"{affinity: pxb}", "unknown affinity relation \"pxb\""},
		{"{affinity: NV18}", "unknown affinity relation \"NV18\""},
	} {
		sc, err := LoadBytes("t.yaml", []byte(minimal+"  - {name: t, tool: ib_write_bw, from: a, to: b, expect: "+c.expect+"}\n"))
		got := errText(err)
		if c.want == "" && (err != nil || sc.Tests[0].Expect.Affinity == "") || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("expect %s: %q", c.expect, got)
		}
	}
}
