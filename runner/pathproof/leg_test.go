package pathproof

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/judge"
)

// A sweep whose one size was printed without figures still moved that
// size's traffic: the path proof expects it, or the devices' counters read
// as "more than the tool's traffic".
func TestClockLeftOutRowsCountForThePath(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "softroce", "ib_write_bw_sweep_client.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var zeroed []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == "8388608" {
			l = " 8388608    5             0.000000            0.000000            0.000000"
		}
		zeroed = append(zeroed, l)
	}
	ms, err := parsers.ParsePerftest(strings.NewReader(strings.Join(zeroed, "\n")))
	if err != nil || len(ms) != 1 || !ms[0].OK {
		t.Fatalf("%v, %+v", err, ms)
	}
	full, err := parsers.ParsePerftest(strings.NewReader(string(b)))
	if err != nil || len(full) != 1 {
		t.Fatal(err)
	}
	p := &Leg{eps: []string{"client-0"}}
	res := &schema.Result{Test: "t"}
	got := p.expect([]judge.Outcome{{OK: true, M: ms[0]}}, res)
	want := p.expect([]judge.Outcome{{OK: true, M: full[0]}}, res)
	if got != want || got.Bytes == 0 {
		t.Fatalf("expected traffic %+v with a size left out, %+v with every size measured; want the same", got, want)
	}
}
