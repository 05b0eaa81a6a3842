package nixl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Options is one run of the probe.
type Options struct {
	Args           []string      // the probe's own flags (rdmabench_nixl.py)
	Limit          time.Duration // the watchdog: past it the probe is killed, exit 124
	Stdout, Stderr io.Writer
}

// Grace is how long the probe has to end after SIGTERM before it is killed.
const Grace = 5 * time.Second

// Run runs the probe under the image's python3 and returns its exit
// status: the probe's own, 124 past the limit, 128+signal when stopped by
// one. The script is written to a private folder removed on every way out.
func Run(ctx context.Context, o Options) int {
	python, _, looked := Python()
	if python == "" {
		fmt.Fprintf(o.Stderr, "%s: no python3 (looked at %v): run it in the serving image, or set %s\n", Program, looked, PythonEnv)
		return 1
	}
	dir, err := os.MkdirTemp("", "rdmabench-nixl-")
	if err != nil {
		fmt.Fprintf(o.Stderr, "%s: %v\n", Program, err)
		return 1
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "rdmabench_nixl.py")
	if err := os.WriteFile(script, Script, 0o600); err != nil {
		fmt.Fprintf(o.Stderr, "%s: %v\n", Program, err)
		return 1
	}
	cmd := exec.Command(python, append([]string{"-u", script}, o.Args...)...)
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // NIXL's threads and UCX's helpers go with it
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(o.Stderr, "%s: %s: %v\n", Program, python, err)
		return 1
	}
	return supervise(ctx, cmd, o)
}

// supervise waits for the probe, ending it on the limit, a signal or ctx.
func supervise(ctx context.Context, cmd *exec.Cmd, o Options) int {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	limit := time.NewTimer(o.Limit)
	defer limit.Stop()
	stop := func(code int, why string) int {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		var waitErr error
		select {
		case waitErr = <-done:
		case <-time.After(Grace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			waitErr = <-done
		}
		_ = waitErr // stopped on purpose: code says why, not the probe's exit status
		// Said once the child's output is all copied: the writers may be
		// the same buffer its copying goroutine fills.
		fmt.Fprintf(o.Stderr, "%s: %s\n", Program, why)
		return code
	}
	select {
	case err := <-done:
		return exitCode(err)
	case <-limit.C:
		return stop(124, fmt.Sprintf("did not finish within %s (the peer missing, or NIXL stuck)", o.Limit))
	case s := <-sigs:
		return stop(128+int(s.(syscall.Signal)), "stopped by "+s.String())
	case <-ctx.Done():
		return stop(1, ctx.Err().Error())
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1
}

// LimitOf is the watchdog for the probe's own --time-limit (seconds): that
// and half a minute, so that the probe's own bound speaks first.
func LimitOf(args []string) time.Duration {
	limit := 600.0
	for i, a := range args {
		v := ""
		switch {
		case a == "--time-limit" && i+1 < len(args):
			v = args[i+1]
		case len(a) > len("--time-limit=") && a[:len("--time-limit=")] == "--time-limit=":
			v = a[len("--time-limit="):]
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			limit = f
		}
	}
	return time.Duration(limit*float64(time.Second)) + 30*time.Second
}

// Find runs the find script: what preflight reads (FindLines, then the
// interpreter's python-version=, nixl=, nixl-version=, plugins=, torch=).
func Find(ctx context.Context, stdout io.Writer) int {
	lines := FindLines()
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	python, _, _ := Python()
	if python == "" {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", findScript).CombinedOutput()
	stdout.Write(out)
	if err != nil {
		fmt.Fprintf(stdout, "nixl-error=%s: %v\n", python, err)
	}
	return 0
}
