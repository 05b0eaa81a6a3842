package nccl

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
)

// TestCopyValidation: the copy is one process reading another GPU; each
// mistake is named with its fix.
func TestCopyValidation(t *testing.T) {
	base := Options{Ranks: 1, Device: 0, PeerDevice: 1, Collective: CopyCollective, DataType: "float",
		MinBytes: 1 << 20, MaxBytes: 1 << 30, StepFactor: 2, Iters: 20, Warmup: 5}
	if err := base.validate(); err != nil {
		t.Fatalf("a valid copy: %v", err)
	}
	for name, c := range map[string]struct {
		edit func(*Options)
		want string
	}{
		"ranks":     {func(o *Options) { o.Ranks = 2 }, "collective copy is one process (it reads the peer GPU itself): --ranks 2, want 1"},
		"no peer":   {func(o *Options) { o.PeerDevice = -1 }, "collective copy needs --peer-device"},
		"same GPU":  {func(o *Options) { o.Device, o.PeerDevice = 3, 3 }, "--peer-device 3 is --device itself"},
		"not copy":  {func(o *Options) { o.Collective = "cpy" }, `unknown collective "cpy" (known: [all_reduce all_gather reduce_scatter alltoall sendrecv broadcast], and copy with --peer-device)`},
		"bad sizes": {func(o *Options) { o.MinBytes = 1 << 31 }, "want 0 < b <= e"},
	} {
		o := base
		c.edit(&o)
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// copyRun runs the probe's copy over the stand-in libcuda.so.1 alone (no
// libnccl.so.2 in the folder: the copy must not load it).
func copyRun(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, "libnccl.so.2")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, Program), append([]string{"--collective", "copy", "--time-limit", "50s"}, args...)...)
	cmd.Env = append(append(os.Environ(), "LD_LIBRARY_PATH="+dir), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCopyOverStandins: GPU 0 READs GPU 1 through the stand-in driver, no
// NCCL present: the table parses as the probe's, test copy, one rank,
// sizes 1 MiB to 4 MiB ×2 with busbw = algbw > 0 and no wrong element,
// carried GPU to GPU; without peer access the copy is staged and says so.
func TestCopyOverStandins(t *testing.T) {
	dir := standin(t)
	for env, kind := range map[string]string{"": parsers.TransportP2P, "RDMABENCH_STANDIN_NO_P2P=1": parsers.TransportShm} {
		out, err := copyRun(t, dir, []string{env}, "--device", "0", "--peer-device", "1", "-b", "1M", "-e", "4M", "-f", "2", "-n", "3", "-w", "1")
		if err != nil {
			t.Fatalf("%q: %v\n%s", env, err, out)
		}
		ms, err := parsers.Parse(Program, strings.NewReader(out))
		if err != nil || len(ms) != 1 || !ms[0].OK {
			t.Fatalf("%q: %v %+v\n%s", env, err, ms, out)
		}
		m := ms[0]
		if m.Test != CopyCollective || m.Ranks != 1 || len(m.Samples) != 3 || m.Info["copy_device"] != "0" || m.Info["copy_peer"] != "1" {
			t.Errorf("%q: test %q ranks %d samples %d info %v", env, m.Test, m.Ranks, len(m.Samples), m.Info)
		}
		for i, s := range m.Samples {
			if s.Bytes != 1<<(20+i) || s.Count != s.Bytes/4 || s.Wrong == nil || *s.Wrong != 0 ||
				s.BusBWBps == nil || *s.BusBWBps <= 0 || *s.BusBWBps != *s.AlgBWBps || s.InplaceBusBWBps == nil {
				t.Errorf("%q: sample %d: %+v", env, i, s)
			}
		}
		if m.Transport == nil || m.Transport.Kind != kind {
			t.Errorf("%q: transport %+v, want %s", env, m.Transport, kind)
		}
		if strings.Contains(out, "NCCL") {
			t.Errorf("%q: the copy speaks of NCCL:\n%s", env, out)
		}
	}
}

// TestCopyPeerNotSeen: a peer the process cannot see is named, with
// CUDA_VISIBLE_DEVICES and the fix.
func TestCopyPeerNotSeen(t *testing.T) {
	dir := standin(t)
	out, err := copyRun(t, dir, []string{"RDMABENCH_STANDIN_GPUS=1", "CUDA_VISIBLE_DEVICES=3"}, "--device", "0", "--peer-device", "1", "-b", "1M", "-e", "1M")
	want := `--peer-device 1: this process sees 1 GPUs (CUDA_VISIBLE_DEVICES="3"); the copy needs both GPUs of one host in its view`
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("%v\n%s", err, out)
	}
}
