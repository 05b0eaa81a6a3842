// Package pyprobe runs one of rdmabench's Python probes (the NIXL probe,
// the DeepEP probe): a script embedded in a small static binary, run with
// the python3 of the image that serves, because that python3 is the one
// holding the libraries vLLM loads (nixl, torch, deep_ep). This package
// finds that interpreter, writes the script to a private folder, bounds
// the run with a watchdog and ends the script's whole process group on
// the limit or a signal, so that nothing it started outlives it.
package pyprobe

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
	"strings"
	"syscall"
	"time"
)

// PythonEnv names the python3 to use where PATH's is not the serving one.
const PythonEnv = "RDMABENCH_PYTHON"

// Grace is how long the probe has to end after SIGTERM before it is killed.
const Grace = 5 * time.Second

// Python is the interpreter the probe runs with: $RDMABENCH_PYTHON, else
// python3 (then python) on PATH, as a shell in the image would find it;
// foundBy says which rule, looked every place tried.
func Python() (path, foundBy string, looked []string) {
	if p := os.Getenv(PythonEnv); p != "" {
		return p, PythonEnv, []string{PythonEnv + "=" + p}
	}
	for _, name := range []string{"python3", "python"} {
		looked = append(looked, name+" on PATH")
		if p, err := exec.LookPath(name); err == nil {
			return p, "PATH", looked
		}
	}
	return "", "", append(looked[:len(looked):len(looked)], "PATH="+os.Getenv("PATH"))
}

// Script is one probe: its program name (the prefix of every line it says
// of itself), the embedded source and what its watchdog message blames.
type Script struct {
	Program string // rdmabench-nixl, rdmabench-deepep
	Name    string // the file name it is written as (rdmabench_nixl.py)
	Source  []byte
	Stuck   string // what a run past the limit most likely means ("the peer missing, or NIXL stuck")
}

// Options is one run of a probe.
type Options struct {
	Args           []string      // the script's own flags
	Limit          time.Duration // the watchdog: past it the probe is killed, exit 124
	Env            []string      // added to the process's environment (KEY=VALUE)
	Stdout, Stderr io.Writer
}

// Run runs the script under the image's python3 and returns its exit
// status: the script's own, 124 past the limit, 128+signal when stopped by
// one. The script is written to a private folder removed on every way out.
func (s Script) Run(ctx context.Context, o Options) int {
	python, _, looked := Python()
	if python == "" {
		fmt.Fprintf(o.Stderr, "%s: no python3 (looked at %v): run it in the serving image, or set %s\n", s.Program, looked, PythonEnv)
		return 1
	}
	dir, err := os.MkdirTemp("", s.Program+"-")
	if err != nil {
		fmt.Fprintf(o.Stderr, "%s: %v\n", s.Program, err)
		return 1
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, s.Name)
	if err := os.WriteFile(script, s.Source, 0o600); err != nil {
		fmt.Fprintf(o.Stderr, "%s: %v\n", s.Program, err)
		return 1
	}
	cmd := exec.Command(python, append([]string{"-u", script}, o.Args...)...)
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.SysProcAttr = procAttr() // the libraries' threads and helpers go with it, and it with the launcher
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(o.Stderr, "%s: %s: %v\n", s.Program, python, err)
		return 1
	}
	return s.supervise(ctx, cmd, o)
}

// supervise waits for the probe, ending it on the limit, a signal or ctx.
func (s Script) supervise(ctx context.Context, cmd *exec.Cmd, o Options) int {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	limit := time.NewTimer(o.Limit)
	defer limit.Stop()
	stop := func(code int, why string) int {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		var waited error // the child's end is what matters here, not its status
		select {
		case waited = <-done:
		case <-time.After(Grace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			waited = <-done
		}
		_ = waited
		// Said once the child's output is all copied: the writers may be
		// the same buffer its copying goroutine fills.
		fmt.Fprintf(o.Stderr, "%s: %s\n", s.Program, why)
		return code
	}
	select {
	case err := <-done:
		return exitCode(err)
	case <-limit.C:
		return stop(124, fmt.Sprintf("did not finish within %s (%s)", o.Limit, s.Stuck))
	case sig := <-sigs:
		return stop(128+int(sig.(syscall.Signal)), "stopped by "+sig.String())
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

// LimitOf is the watchdog for a script's own --time-limit (seconds): that
// and half a minute, so that the script's own bound speaks first.
func LimitOf(args []string) time.Duration {
	limit := 600.0
	for i, a := range args {
		v := ""
		switch {
		case a == "--time-limit" && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(a, "--time-limit="):
			v = strings.TrimPrefix(a, "--time-limit=")
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			limit = min(f, maxLimit) // inf, 1e12: a Duration would overflow
		}
	}
	return time.Duration(limit*float64(time.Second)) + 30*time.Second
}

// maxLimit is the longest watchdog, in seconds (30 days): anything longer
// is no bound, and would overflow time.Duration (292 years) soon after.
const maxLimit = 30 * 24 * 3600.0

// FindLines is what --find prints before the interpreter's own report:
// which python3, found how, or where it was looked for.
func FindLines() []string {
	p, by, looked := Python()
	if p == "" {
		return []string{"python=notfound", "looked=" + strings.Join(looked, "; ")}
	}
	return []string{"python=" + p, "python-found-by=" + by}
}

// Find prints FindLines, then runs findScript (python source printing
// key=value lines) with that interpreter, bounded to a minute; a failing
// interpreter is said as errKey=... Preflight reads the lines.
func Find(ctx context.Context, stdout io.Writer, findScript, errKey string) int {
	for _, l := range FindLines() {
		fmt.Fprintln(stdout, l)
	}
	python, _, _ := Python()
	if python == "" {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", findScript).CombinedOutput()
	_, _ = stdout.Write(out)
	if err != nil {
		fmt.Fprintf(stdout, "%s=%s: %v\n", errKey, python, err)
	}
	return 0
}
