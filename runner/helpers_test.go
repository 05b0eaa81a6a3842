package runner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// freePort returns a TCP port free on 127.0.0.1 right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func endpoints(names ...string) []endpoint.Endpoint {
	var eps []endpoint.Endpoint
	for _, n := range names {
		pool, idx, _ := strings.Cut(n, "-")
		i, _ := strconv.Atoi(idx)
		eps = append(eps, endpoint.Endpoint{Name: n, Pool: pool, Index: i})
	}
	return eps
}

// needBinaries skips when a real tool is absent (CI installs them with
// ./.ci/setup).
func needBinaries(t testing.TB, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed (run ./.ci/setup, which installs ucx-utils and iperf3)", b)
		}
	}
}

// ucxFinal reads the client's "Final:" line independently of the parsers
// package: overall bandwidth (MB/s, MB = 2^20 bytes) → bits/s.
func ucxFinal(r io.Reader) (iters, bps float64, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 9 && f[0] == "Final:" {
			iters, _ = strconv.ParseFloat(f[1], 64)
			mbps, err := strconv.ParseFloat(f[6], 64)
			return iters, mbps * (1 << 20) * 8, err
		}
	}
	return 0, 0, fmt.Errorf("no Final: line")
}

// iperfJSON reads iperf3 -J's received bits per second.
func iperfJSON(r io.Reader) (float64, error) {
	var doc struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
		Error string `json:"error"`
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	if i := strings.IndexByte(string(data), '{'); i > 0 {
		data = data[i:]
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return 0, err
	}
	if doc.Error != "" {
		return 0, fmt.Errorf("iperf3: %s", doc.Error)
	}
	return doc.End.SumReceived.BitsPerSecond, nil
}

// testParse is a small parser for the tools these tests run, until the
// parsers package's Parse is merged (then the runner uses that one).
func testParse(size int64) ParseFunc {
	return func(tool string, r io.Reader) (parsers.Measurement, error) {
		m := parsers.Measurement{Tool: tool}
		switch tool {
		case "ucx_perftest":
			iters, bps, err := ucxFinal(r)
			if err != nil {
				m.ErrorClass, m.Error = parsers.ClassTruncated, err.Error()
				return m, nil
			}
			m.OK = true
			m.Samples = []parsers.Sample{{Bytes: size, Iterations: int64(iters), BWAvgBps: parsers.F(bps)}}
		case "iperf3":
			bps, err := iperfJSON(r)
			if err != nil {
				m.ErrorClass, m.Error = parsers.ClassToolError, err.Error()
				return m, nil
			}
			m.OK = true
			m.Samples = []parsers.Sample{{BWAvgBps: parsers.F(bps)}}
		case "trivial":
			m.OK = true
			m.Samples = []parsers.Sample{{Bytes: 1, BWAvgBps: parsers.F(1)}}
		default:
			return m, fmt.Errorf("testParse: no parser for %s", tool)
		}
		return m, nil
	}
}

// pidFileCmd wraps argv so that the shell writes the tool's pid (the shell
// execs the tool, keeping the pid) to file before running it.
func pidFileCmd(file string, argv ...string) []string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return []string{"sh", "-c", "echo $$ > " + file + "; exec " + strings.Join(q, " ")}
}

// assertGone fails if any pid written to the files is still alive.
func assertGone(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("pid file %s: %v (process never started?)", f, err)
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Errorf("pid file %s: %v", f, err)
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("process %d (%s) still alive after the run", pid, filepath.Base(f))
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}

// readJSONL reads results.jsonl lines.
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("results.jsonl line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
