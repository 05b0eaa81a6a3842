package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

// downWait bounds how long down waits for the cluster to remove what it
// started (pods' namespaces, the control plane) and exit.
const downWait = 2 * time.Minute

// down stops a cluster `make kube-up` started in the background: SIGTERM
// to the process its pid file names (the same as Ctrl-C in its terminal),
// then a bounded wait for it to remove everything and exit.
func down(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pidfile := fs.String("pidfile", ".work/kube-up.pid", "the pid file kubecluster up --pidfile wrote")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	pid, err := clusterPID(*pidfile)
	if err != nil {
		fmt.Fprintf(stderr, "kubecluster: no cluster to stop: %v\n", err)
		return 0
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		fmt.Fprintf(stderr, "kubecluster: stop %d: %v\n", pid, err)
		return 1
	}
	fmt.Fprintf(stderr, "kubecluster: stopping the cluster (pid %d): it removes everything it started\n", pid)
	for deadline := time.Now().Add(downWait); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if !isKubecluster(pid) {
			fmt.Fprintln(stderr, "kubecluster: stopped")
			return 0
		}
	}
	fmt.Fprintf(stderr, "kubecluster: pid %d still runs after %v; its log says why (kill -KILL %d leaves its network namespaces behind)\n", pid, downWait, pid)
	return 1
}

// clusterPID is the pid in pidfile, when that process is kubecluster.
func clusterPID(pidfile string) (int, error) {
	b, err := os.ReadFile(pidfile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("no cluster started by make kube-up is running (%s is missing)", pidfile)
	}
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s holds no pid", pidfile)
	}
	if !isKubecluster(pid) {
		return 0, fmt.Errorf("process %d (from %s) is not kubecluster: a stale pid file", pid, pidfile)
	}
	return pid, nil
}

// isKubecluster: pid runs and its program is kubecluster (a reused pid is
// someone else's).
func isKubecluster(pid int) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(cmdline) == 0 {
		return false
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return strings.HasSuffix(string(argv0), "kubecluster")
}

// writePIDFile records this process for down; the returned func removes it.
func writePIDFile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return nil, err
	}
	return func() { _ = os.Remove(path) }, nil
}

// klogSink holds client-go's klog lines ("Caches are synced for …") until
// the cluster's log folder exists, then writes them there: they are the
// cluster's log, not kube-up's terminal.
type klogSink struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	file *os.File
}

// maxKlogBuffer bounds what is held before the log file is known.
const maxKlogBuffer = 1 << 20

func (s *klogSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		return s.file.Write(p)
	}
	if s.buf.Len()+len(p) <= maxKlogBuffer {
		s.buf.Write(p)
	}
	return len(p), nil
}

func (s *klogSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// toFile writes what was held to path and sends the rest there.
func (s *klogSink) toFile(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = f.Write(s.buf.Bytes())
	s.buf.Reset()
	s.file = f
	return err
}

func (s *klogSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		_ = s.file.Close()
		s.file = nil
	}
}

// quietKlog sends klog to w instead of stderr.
func quietKlog(w io.Writer) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(w)
}
