package pathproof

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
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

// deadlineBackend answers the counters' script at once, noting how long
// each reading was given.
type deadlineBackend struct {
	backend.Backend
	bounds []time.Duration
}

func (b *deadlineBackend) Exec(ctx context.Context, _ endpoint.Endpoint, _ []string) ([]byte, error) {
	dl, _ := ctx.Deadline()
	b.bounds = append(b.bounds, time.Until(dl).Round(time.Second))
	return nil, errors.New("no counters here")
}

// TestReadTimeout: each counters reading gets ReadTimeout (the runner's
// --preflight-timeout), never less than 15 s: under emulation reading a
// pod's counters took longer than that and the proof was lost ("context
// deadline exceeded") though the traffic was there.
func TestReadTimeout(t *testing.T) {
	for _, tc := range []struct{ set, want time.Duration }{{0, 15 * time.Second}, {5 * time.Second, 15 * time.Second}, {4 * time.Minute, 4 * time.Minute}} {
		be := &deadlineBackend{}
		p := &Leg{r: Run{Backend: be, ReadTimeout: tc.set, Endpoints: map[string]endpoint.Endpoint{"a-0": {Name: "a-0", Device: "rxe0"}}},
			eps: []string{"a-0"}, errs: map[string]string{}}
		p.read(context.Background())
		if len(be.bounds) != 1 || be.bounds[0] != tc.want {
			t.Errorf("ReadTimeout %s: readings bounded at %v; want one at %s", tc.set, be.bounds, tc.want)
		}
		if !strings.Contains(p.errs["a-0"], "reading rxe0 counters: no counters here") {
			t.Errorf("error %q", p.errs["a-0"])
		}
	}
}
