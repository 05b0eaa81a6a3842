package e2erdma

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// nodeBounds are the node lane's bounds at the host's measured pace: the
// reference host's (baseNodeBounds) times the pace, each fitted into what
// is left of the lane's -timeout when it is used (nodeBounds.fit).
type nodeBounds struct {
	pace Pace
	// join: join.sh on both VMs and both nodes Ready (the image import).
	join time.Duration
	// startup is the scenario's startupTimeout: the pods Ready (image
	// unpacked, the init container's bundle copied, the sandbox up).
	startup time.Duration
	// preflight is --preflight-timeout: each pod's first exec (runc exec,
	// the session's start) and the facts script.
	preflight time.Duration
	// test is the scenario's defaults.timeout: one test's legs.
	test time.Duration
	// run is a run's --timeout; the test kills it a minute after.
	run time.Duration
	// firstRound is a background run's wait for its "round 1/" line;
	// interrupt, Ctrl-C to its exit; inVM, a tool showing up in a VM.
	firstRound, interrupt, inVM time.Duration
	// apiClean, tasksClean, containersClean: a run's pods gone from the
	// API, their processes from containerd, their containers and
	// sandboxes (the kubelet's garbage collection, once a minute).
	apiClean, tasksClean, containersClean time.Duration
	// leave is leave.sh on both VMs.
	leave time.Duration
}

// baseNodeBounds are the bounds on the reference host (RefBoot,
// RefImportPerMB): about three times what each step took there.
var baseNodeBounds = nodeBounds{
	join:      6 * time.Minute,
	startup:   3 * time.Minute,
	preflight: 2 * time.Minute,
	test:      2 * time.Minute,
	run:       8 * time.Minute,
	// Pods Ready and the first exec.
	firstRound: 4 * time.Minute,
	interrupt:  2 * time.Minute,
	inVM:       time.Minute,
	apiClean:   time.Minute, tasksClean: 45 * time.Second, containersClean: 100 * time.Second,
	leave: 2 * time.Minute,
}

// at is b at pace p.
func (b nodeBounds) at(p Pace) nodeBounds {
	s := p.Scale
	return nodeBounds{pace: p, join: s(b.join), startup: s(b.startup), preflight: s(b.preflight), test: s(b.test), run: s(b.run),
		firstRound: s(b.firstRound), interrupt: s(b.interrupt), inVM: s(b.inVM),
		apiClean: s(b.apiClean), tasksClean: s(b.tasksClean),
		// The kubelet's collection runs once a minute whatever the pace.
		containersClean: time.Minute + s(b.containersClean-time.Minute), leave: s(b.leave)}
}

// nodeReserve is what the lane keeps of its -timeout for what follows a
// step: the last clean-up wait, leave.sh, stopping the control plane.
func (b nodeBounds) nodeReserve() time.Duration { return b.containersClean + b.leave + time.Minute }

// fit is want fitted into what is left of the lane's -timeout less the
// reserve; the test fails at once, saying so, when less than need is
// left (rather than being killed by -timeout with nothing said).
func (b nodeBounds) fit(t *testing.T, what string, want, need time.Duration) time.Duration {
	t.Helper()
	dl, has := t.Deadline()
	got, ok := Budget(want, b.nodeReserve(), need, dl, has, time.Now())
	if !ok {
		t.Fatalf("%s needs up to %s at this host's pace %s, at least %s; the lane's -timeout leaves %s after its reserve of %s: raise go test -timeout (make e2e-nodes NODES_TIMEOUT=…)",
			what, want, b.pace, need, got, b.nodeReserve())
	}
	if got < want {
		t.Logf("%s: bound %s (at pace ×%.2f) cut to %s, what the lane's -timeout leaves", what, want, b.pace.Factor, got)
	}
	return got
}

func (b nodeBounds) String() string {
	return "join " + b.join.String() + ", pods Ready " + b.startup.String() + ", preflight " + b.preflight.String() +
		", a test " + b.test.String() + ", a run " + b.run.String() + ", first round " + b.firstRound.String() +
		", Ctrl-C " + b.interrupt.String() + ", clean-up " + b.apiClean.String() + "/" + b.tasksClean.String() + "/" + b.containersClean.String() +
		", leave " + b.leave.String()
}

// importTime is join.sh's image import, read from its step lines (the
// seconds of the last step less the one before it).
func importTime(out string) (time.Duration, bool) {
	m := regexp.MustCompile(`(?m)^join: (\d+)s (.*)$`).FindAllStringSubmatch(out, -1)
	if len(m) < 2 || !regexp.MustCompile(`^images imported`).MatchString(m[len(m)-1][2]) {
		return 0, false
	}
	end, _ := strconv.Atoi(m[len(m)-1][1])
	begin, _ := strconv.Atoi(m[len(m)-2][1])
	return time.Duration(end-begin) * time.Second, true
}

// importPace is the pace of the slower VM's image import.
func importPace(joins [2]NodeJoin) (Pace, bool) {
	fi, err := os.Stat(filepath.Join(os.Getenv("RDMABENCH_SOFTROCE"), nodeImages))
	if err != nil {
		return Pace{}, false
	}
	mb := float64(fi.Size()) / 1e6
	var slowest time.Duration
	for _, j := range joins {
		d, ok := importTime(j.Output)
		if !ok {
			return Pace{}, false
		}
		slowest = max(slowest, d)
	}
	ref := time.Duration(mb * float64(RefImportPerMB))
	return PaceOf("image import ("+strconv.Itoa(int(mb))+" MB)", slowest, ref), true
}
