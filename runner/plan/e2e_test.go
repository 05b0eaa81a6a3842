package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/scenarios"
)

// TestPlannedCommandsRunForReal runs the planned ucx_perftest (UCX over
// TCP) and iperf3 legs with the real tools on 127.0.0.1, the way the runner
// does (server, listen-table readiness, client): the command lines the
// planner writes are accepted by the tools and measure something.
func TestPlannedCommandsRunForReal(t *testing.T) {
	for _, bin := range []string{"ucx_perftest", "iperf3"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed (./.ci/setup installs it)", bin)
		}
	}
	s := scenario([]scenarios.Pool{pool("a", 1), pool("b", 1)},
		scenarios.Test{Name: "ucx", Tool: "ucx_perftest", From: "a", To: "b",
			Args: scenarios.Args{Transports: "tcp", Sizes: []scenarios.Size{size("64KiB")}, Iterations: 500}},
		scenarios.Test{Name: "ucx-lat", Tool: "ucx_perftest", From: "a", To: "b",
			Args: scenarios.Args{Transports: "tcp", Test: "tag_lat", Iterations: 500}},
		scenarios.Test{Name: "iperf3", Tool: "iperf3", From: "a", To: "b", Args: scenarios.Args{Duration: dur("1s")}},
	)
	p, err := compileHeld(s, CompileOptions{PortOffset: freeOffset(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Rounds {
		for _, j := range r.Jobs {
			for li, l := range j.Legs {
				t.Run(fmt.Sprintf("%s/%d", j.ID, li), func(t *testing.T) {
					out := runLeg(t, l, time.Duration(j.TimeoutSec*float64(time.Second)))
					switch j.Tool {
					case "ucx_perftest":
						if !strings.Contains(out, "Final:") {
							t.Fatalf("no Final: line in the client output:\n%s", out)
						}
					case "iperf3":
						var doc struct{ End map[string]any }
						if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.End["sum_received"] == nil {
							t.Fatalf("iperf3 -J output without end.sum_received (%v):\n%s", err, out)
						}
					}
				})
			}
		}
	}
}

// freeOffset picks a port offset whose ucx_perftest and iperf3 ports are
// free now (other tests on this host may use the defaults).
func freeOffset(t *testing.T) int {
	for range 50 {
		off := 1000 + rand.IntN(8000)
		if portFree(13337+off) && portFree(5201+off) {
			return off
		}
	}
	t.Fatal("no free ports")
	return 0
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// runLeg starts the leg's commands in order, waiting for each listen
// readiness, and returns the parsed side's output. Every process is in its
// own group and killed at the end.
func runLeg(t *testing.T, l Leg, bound time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var parsed *bytes.Buffer
	var cmds []*exec.Cmd
	for _, pc := range l.Commands {
		var out bytes.Buffer
		c := exec.CommandContext(ctx, pc.Argv[0], substituteLocal(pc.Argv[1:])...)
		c.Env = os.Environ()
		for k, v := range pc.Env {
			c.Env = append(c.Env, k+"="+v)
		}
		c.Stdout, c.Stderr = &out, &out
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
		if err := c.Start(); err != nil {
			t.Fatalf("start %v: %v", pc.Argv, err)
		}
		cmds = append(cmds, c)
		t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
		if pc.Parse {
			parsed = &out
		}
		if pc.Ready == "listen" {
			waitListen(t, ctx, pc.Port)
		}
	}
	for i := len(cmds) - 1; i >= 0; i-- {
		if err := cmds[i].Wait(); err != nil {
			t.Fatalf("%v: %v", l.Commands[i].Argv, err)
		}
	}
	return parsed.String()
}

func substituteLocal(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "${addr:") {
			a = localAddress
		}
		out[i] = a
	}
	return out
}

// waitListen polls the kernel's listen tables (never connecting: the tools
// accept exactly one connection) until port is listening.
func waitListen(t *testing.T, ctx context.Context, port int) {
	want := fmt.Sprintf(":%04X ", port)
	for {
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			data, _ := os.ReadFile(f)
			for _, line := range strings.Split(string(data), "\n") {
				fields := strings.Fields(line)
				if len(fields) > 3 && strings.Contains(fields[1]+" ", want) && fields[3] == "0A" {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("port %d never listened", port)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
