package nccl

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCopyStandinMatchesH100 holds the copy's output over the stand-in
// driver to the real one (testdata/gpu/h100-kv-gpu2gpu/run5-like-x4/
// raw-gpu-copy.txt, GPU 0 reading GPU 1 of an H100 pair over NVLink): the
// same banner keys, the same lines in the same order with numbers masked,
// the same columns (in-place #wrong "N/A") and the same trailer.
func TestCopyStandinMatchesH100(t *testing.T) {
	real, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gpu", "h100-kv-gpu2gpu", "run5-like-x4", "raw-gpu-copy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := standin(t)
	out, err := copyRun(t, dir, nil, "--device", "0", "--peer-device", "1", "-b", "1M", "-e", "4M", "-f", "2", "-n", "3", "-w", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r, s := bannerKeys(string(real)), bannerKeys(out); r != s || r != "version cuda-driver copy-device copy-peer copy-p2p" {
		t.Errorf("banner keys: real %q, stand-in %q", r, s)
	}
	realShape, standinShape := copyShape(string(real)), copyShape(out)
	if len(realShape) != len(standinShape) {
		t.Fatalf("%d lines of shape in the capture, %d over the stand-in:\n%s\n---\n%s", len(realShape), len(standinShape), strings.Join(realShape, "\n"), strings.Join(standinShape, "\n"))
	}
	t.Logf("shape of both:\n%s", strings.Join(realShape, "\n"))
	for i := range realShape {
		if realShape[i] != standinShape[i] {
			t.Errorf("line %d:\n real     %q\n stand-in %q", i, realShape[i], standinShape[i])
		}
	}
}

// bannerKeys are the keys of the first line's key=value pairs.
func bannerKeys(out string) string {
	first, _, _ := strings.Cut(out, "\n")
	var keys []string
	for _, f := range strings.Fields(first) {
		if k, _, ok := strings.Cut(f, "="); ok {
			keys = append(keys, k)
		} else if f == "version" {
			keys = append(keys, f)
		}
	}
	return strings.Join(keys, " ")
}

var (
	numbers = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	spaces  = regexp.MustCompile(`\s+`)
	// gpuName masks the host and the model: "on vm device N [bus] NVIDIA …".
	gpuName = regexp.MustCompile(`^(# (?:Rank .* on \S+ device|Peer: device) N \[N:N:N\]) [^,]*?(,|$)`)
	host    = regexp.MustCompile(`^(# Rank .* on )\S+( device)`)
)

// copyShape is the output with numbers, runs of spaces, the host's names
// and the GPUs' models masked, and rows of one shape folded to one: what
// the parser and a reader rely on, not what was measured.
func copyShape(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		l = spaces.ReplaceAllString(numbers.ReplaceAllString(l, "N"), " ")
		l = host.ReplaceAllString(gpuName.ReplaceAllString(l, "$1 GPU$2"), "${1}HOST$2")
		l = strings.TrimSpace(l)
		if len(lines) > 0 && !strings.HasPrefix(l, "#") && l == lines[len(lines)-1] {
			continue // another row of the same shape
		}
		lines = append(lines, l)
	}
	return lines
}
