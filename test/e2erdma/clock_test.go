package e2erdma

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
)

// TestNoClockOnVMs: real perftest on the client VM without a CPU clock
// rate. perftest turns cycles into time with the rate it reads from
// /proc/cpuinfo ("cpu MHz") and samples itself; when either is missing (a
// failed calibration on a loaded VM: "Correlation coefficient r^2 < 0.9")
// it prints, under -F, rows of 0 (bandwidth) or inf (latency) instead of
// stopping. Hiding "cpu MHz" in a mount namespace gives that output for
// real; the parser must call it clock_error, never a 0 Gb/s measurement.
func TestNoClockOnVMs(t *testing.T) {
	needVMs(t)
	b, _ := newBackend(t)
	eps, err := provision(t, b)
	if err != nil {
		t.Fatal(err)
	}
	// noClock runs argv on the client with a /proc/cpuinfo that has no
	// "cpu MHz" line, in a mount namespace of its own.
	noClock := func(argv ...string) []string {
		return []string{"sh", "-c", `grep -v "^cpu MHz" /proc/cpuinfo > /tmp/cpuinfo.noclock &&
exec unshare -m sh -c 'mount --bind /tmp/cpuinfo.noclock /proc/cpuinfo && exec "$@"' sh "$@"`, "sh"}
	}
	for _, c := range []struct {
		name, fixture string
		args          []string
	}{
		{"ib_write_bw", "error_no_clock_bw_client.txt", []string{"ib_write_bw", "-d", "rxe0", "-x", "1", "--report_gbits", "-F", "-n", "200", "-s", "65536"}},
		{"ib_read_lat", "error_no_clock_lat_client.txt", []string{"ib_read_lat", "-d", "rxe0", "-x", "1", "-F", "-n", "100", "-s", "64"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := start(t, b, eps[0], nil, c.args...)
			waitPort(t, b, eps[0], 18515)
			cli := start(t, b, eps[1], nil, append(noClock(), append(c.args, eps[0].Address)...)...)
			ce, se := cli.wait(t, 120*time.Second), srv.wait(t, 30*time.Second)
			out := append(cli.out.Bytes(), cli.err.Bytes()...)
			if ce.Code != 0 || se.Code != 0 {
				t.Fatalf("exit client %d server %d: perftest with -F goes on without a clock rate\n%s", ce.Code, se.Code, out)
			}
			ms, err := parsers.Parse(c.args[0], bytes.NewReader(out))
			if err != nil || len(ms) != 1 {
				t.Fatalf("parse: %v, %d measurements\n%s", err, len(ms), out)
			}
			m := ms[0]
			if m.OK || m.ErrorClass != parsers.ClassClock || !strings.Contains(m.Error, "no CPU clock rate") ||
				len(m.Samples) != 1 || m.Samples[0].Iterations <= 0 {
				t.Fatalf("client: ok %v class %q samples %+v error %q; want clock_error keeping the row\n%s", m.OK, m.ErrorClass, m.Samples, m.Error, out)
			}
			t.Logf("%s without cpu MHz: %s", c.name, m.Error)
			saveFixture(t, c.fixture, out)
		})
	}
	assertNoLeftovers(t, b, eps)
}
