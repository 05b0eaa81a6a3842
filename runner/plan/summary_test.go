package plan

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/scenarios"
)

// The estimate is the rounds one after another, each as long as its
// longest job: 4 endpoints all-to-all is 3 rounds of jobs running both
// directions, each direction 2 sizes × 3 repetitions × (10 s + the local
// backend's 15 ms).
func TestSummaryEstimate(t *testing.T) {
	s := scenario([]scenarios.Pool{pool("ep", 4)},
		scenarios.Test{Name: "a2a", Tool: "ib_write_bw", From: "ep", Pattern: "all-to-all", Repetitions: intp(3),
			Args: scenarios.Args{Sizes: []scenarios.Size{size("4KiB"), size("64KiB")}, Duration: dur("10s")}},
		scenarios.Test{Name: "one", Tool: "iperf3", From: "ep", Args: scenarios.Args{Duration: dur("5s")}})
	p, err := Compile(s, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	want := 3 * 2 * (2 * 3 * (10*time.Second + 15*time.Millisecond))
	if len(st) != 2 || st[0].Rounds != 3 || st[0].Jobs != 6 || st[0].Legs != 24 || st[0].Repetitions != 3 || st[0].Estimate != want {
		t.Fatalf("a2a stats %+v, want 3 rounds, 6 jobs, 24 legs, 3 repetitions, %s", st[0], want)
	}
	// pairwise in one pool: 0→1 and 2→3 at once, one round of 5 s + 15 ms.
	if st[1].Rounds != 1 || st[1].Jobs != 2 || st[1].Legs != 2 || st[1].Estimate != 5*time.Second+15*time.Millisecond {
		t.Fatalf("iperf3 stats %+v", st[1])
	}
	tot := p.Totals()
	if tot.Rounds != 4 || tot.Jobs != 8 || tot.Legs != 26 || tot.Estimate != want+st[1].Estimate {
		t.Fatalf("totals %+v", tot)
	}
	var out bytes.Buffer
	if err := WriteSummary(&out, p); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"  endpoints        4\n",
		"  host             every endpoint on this host\n",
		"  rounds           4\n",
		"  jobs             8\n",
		"  legs             26\n",
		"  estimated time   6m 5s (the tests' durations",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("summary lacks %q:\n%s", line, out.String())
		}
	}
}

func TestHumanAndThousands(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1500 * time.Millisecond: "1.5s", 61 * time.Second: "1m 1s", 3*time.Hour + 5*time.Minute: "3h 5m",
		50*time.Hour + 59*time.Minute: "2d 2h",
	} {
		if got := Human(d); got != want {
			t.Errorf("Human(%s) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 16773120: "16,773,120", 123456: "123,456"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
