package e2erdma

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/ssh"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

func newBackend(t *testing.T) (*ssh.Backend, [2]endpoint.Endpoint) {
	b, err := ssh.New(pair.Hosts(), ssh.Options{DialTimeout: 5 * time.Second, HandshakeTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = b.Cleanup(ctx)
	})
	eps := [2]endpoint.Endpoint{
		{Name: "server-0", Pool: "server", Host: "vm1", Device: "rxe0"},
		{Name: "client-0", Pool: "client", Host: "vm2", Device: "rxe0"},
	}
	return b, eps
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// run is one started command and its captured output.
type run struct {
	p        backend.Process
	out, err *bytes.Buffer
}

func start(t *testing.T, b backend.Backend, ep endpoint.Endpoint, env map[string]string, argv ...string) *run {
	r := &run{out: &bytes.Buffer{}, err: &bytes.Buffer{}}
	p, err := b.Start(timeout(t, 30*time.Second), ep, backend.Command{Argv: argv, Env: env, Stdout: r.out, Stderr: r.err})
	if err != nil {
		t.Fatalf("start %v on %s: %v", argv, ep.Host, err)
	}
	r.p = p
	return r
}

func (r *run) wait(t *testing.T, d time.Duration) backend.Exit {
	exit, err := r.p.Wait(timeout(t, d))
	if err != nil {
		t.Fatalf("wait: %v\nstdout:\n%s\nstderr:\n%s", err, r.out, r.err)
	}
	return exit
}

// waitPort polls the host's listen table for a TCP port (never a probe
// connection: perftest takes the first connection as its client).
func waitPort(t *testing.T, b backend.Backend, ep endpoint.Endpoint, port int) {
	waitPortOr(t, b, ep, port, nil)
}

// waitPortOr is waitPort that also returns when done closes (the server
// exited before it listened).
func waitPortOr(t *testing.T, b backend.Backend, ep endpoint.Endpoint, port int, done <-chan struct{}) {
	want := ":" + strings.ToUpper(strconv.FormatInt(int64(port), 16)) + " 00000000:0000 0A"
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		out, err := b.Exec(timeout(t, 20*time.Second), ep, []string{"cat", "/proc/net/tcp"})
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte(want)) {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("nothing listens on port %d of %s", port, ep.Host)
}

// saveFixture writes a real output to testdata/softroce when -record is set.
func saveFixture(t *testing.T, name string, data []byte) {
	if !*record {
		return
	}
	dir := filepath.Join(repoRoot, "testdata", "softroce")
	_ = os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// bwRows returns the BW average column of perftest's result rows (the
// fourth field of lines that start with a size), in Gb/s with --report_gbits.
func bwRows(out string) map[int64]float64 {
	rows := map[int64]float64{}
	inTable := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "#bytes" {
			inTable = true
			continue
		}
		if !inTable || len(f) < 5 {
			continue
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		avg, err2 := strconv.ParseFloat(f[3], 64)
		if err1 == nil && err2 == nil {
			rows[size] = avg
		}
	}
	return rows
}

// perftestPair runs a perftest server on eps[0] and its client on eps[1]
// (the client also gets the server's address) and waits for both. A run
// whose client could not time itself (parsers.ClassClock: perftest's
// clock calibration fails now and then on a loaded TCG VM) says nothing of
// the fabric; it is run again, at most twice, as rdmabench itself does.
func perftestPair(t *testing.T, b backend.Backend, eps [2]endpoint.Endpoint, clientWait time.Duration, args ...string) (cli, srv *run, ce, se backend.Exit) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		srv = start(t, b, eps[0], nil, args...)
		waitPort(t, b, eps[0], 18515)
		cli = start(t, b, eps[1], nil, append(args, eps[0].Address)...)
		ce, se = cli.wait(t, clientWait), srv.wait(t, 30*time.Second)
		why := clockTrouble(args[0], cli)
		if why == "" || attempt == 3 {
			return cli, srv, ce, se
		}
		t.Logf("attempt %d: %s; running it again", attempt, why)
	}
}

// clockTrouble says why a perftest client's figures are not measurements
// (all rows, or some sizes of a sweep, printed without a clock rate).
func clockTrouble(tool string, r *run) string {
	ms, err := parsers.Parse(tool, bytes.NewReader(append(r.out.Bytes(), r.err.Bytes()...)))
	if err != nil || len(ms) == 0 {
		return ""
	}
	m := ms[len(ms)-1]
	if m.ErrorClass == parsers.ClassClock {
		return m.Error
	}
	for _, w := range m.Warnings {
		if strings.HasPrefix(w, "left out ") {
			return w
		}
	}
	return ""
}
