package pyprobe

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary a probe launcher (TestLauncherHelper).
const helperEnv = "PYPROBE_TEST_LAUNCHER"

// TestLauncherHelper is not a test: run with helperEnv set, it launches a
// script that prints its pid and sleeps, as rdmabench-deepep launches its.
func TestLauncherHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("the launcher of TestScriptDiesWithItsLauncher")
	}
	s := Script{Program: "pyprobe-test", Name: "sleep.py", Stuck: "a test",
		Source: []byte("import os, sys, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n")}
	os.Exit(s.Run(context.Background(), Options{Limit: time.Minute, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// TestScriptDiesWithItsLauncher: the script runs in a process group of its
// own (so that its helpers end with it), which a kill of the launcher's
// group does not reach; a launcher killed outright (SIGKILL: the backend's
// grace ran out, the OOM killer) must not leave the script running, holding
// its GPU and MASTER_PORT for the next leg.
func TestScriptDiesWithItsLauncher(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLauncherHelper$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("script's pid: %q", line)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("script %d still running 5 s after its launcher was killed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive: the process exists and is not a zombie waiting to be reaped.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestLimitOf: the watchdog is the script's --time-limit and half a
// minute; none, or a value that is no positive number, leaves ten
// minutes; one past 30 days (inf, 1e12) is 30 days, not an overflowed
// negative duration that would kill the script at once.
func TestLimitOf(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 630 * time.Second},
		{[]string{"--time-limit", "80"}, 110 * time.Second},
		{[]string{"--time-limit=1.5"}, 31500 * time.Millisecond},
		{[]string{"--time-limit", "-3"}, 630 * time.Second},
		{[]string{"--time-limit", "inf"}, 30*24*time.Hour + 30*time.Second},
		{[]string{"--time-limit", "1e12"}, 30*24*time.Hour + 30*time.Second},
	} {
		if got := LimitOf(c.args); got != c.want {
			t.Errorf("%q: %v, want %v", c.args, got, c.want)
		}
	}
}
