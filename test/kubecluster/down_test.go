package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
)

// down stops the cluster kube-up started (in the background): it signals
// the process its pid file names, waits for it to end, and says so.
func TestDownStopsTheClusterProcess(t *testing.T) {
	cmd := &exec.Cmd{Path: "/bin/sleep", Args: []string{"kubecluster", "30"}}
	if err := cmd.Start(); err != nil {
		t.Skip("no /bin/sleep:", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	pidfile := filepath.Join(t.TempDir(), "kube-up.pid")
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"down", "--pidfile", pidfile}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "stopped") {
		t.Errorf("down: exit %d: %s", code, errb.String())
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the process still runs")
	}
}

// With no cluster running (no pid file, or one naming another program)
// down says so and signals nothing.
func TestDownWithoutACluster(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"down", "--pidfile", filepath.Join(t.TempDir(), "none.pid")}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "no cluster") {
		t.Errorf("no pid file: exit %d: %s", code, errb.String())
	}
	pidfile := filepath.Join(t.TempDir(), "kube-up.pid")
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil { // the test binary: not kubecluster
		t.Fatal(err)
	}
	errb.Reset()
	if code := run([]string{"down", "--pidfile", pidfile}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "not kubecluster") {
		t.Errorf("a stale pid file: exit %d: %s", code, errb.String())
	}
}

// client-go's klog lines ("Caches are synced for …") go to the cluster's
// log, not kube-up's terminal.
func TestKlogKeptOffTheTerminal(t *testing.T) {
	sink := &klogSink{}
	quietKlog(sink)
	klog.Info("Caches are synced for test")
	klog.Flush()
	if !strings.Contains(sink.String(), "Caches are synced") {
		t.Errorf("klog's line not in the sink: %q", sink.String())
	}
	path := filepath.Join(t.TempDir(), "klog.log")
	if err := sink.toFile(path); err != nil {
		t.Fatal(err)
	}
	defer sink.close()
	klog.Info("after")
	klog.Flush()
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "Caches are synced") || !strings.Contains(string(b), "after") {
		t.Errorf("log file: %q", b)
	}
}
