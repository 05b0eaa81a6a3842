package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSplitNAD(t *testing.T) {
	ns, name, err := splitNAD("rdmabench/rdma-sriov")
	if err != nil || ns != "rdmabench" || name != "rdma-sriov" {
		t.Errorf("%q %q %v", ns, name, err)
	}
	for _, bad := range []string{"rdma-sriov", "/x", "a/", "a/b/c"} {
		if _, _, err := splitNAD(bad); err == nil || !strings.Contains(err.Error(), "NAMESPACE/NAME") {
			t.Errorf("--nad %q: %v", bad, err)
		}
	}
	if _, name, err := splitNAD(""); err != nil || name != "" {
		t.Errorf("empty: %q %v", name, err)
	}
}

func TestUsageNamesTheFlags(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"sideways"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--nad NAMESPACE/NAME") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	if code := run([]string{"up", "--nad", "oops"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "want NAMESPACE/NAME") {
		t.Errorf("bad --nad: exit %d: %s", code, errb.String())
	}
}

// progress writes nothing once done is closed before its first tick.
func TestProgressStops(t *testing.T) {
	var buf bytes.Buffer
	done := make(chan struct{})
	close(done)
	progress(&buf, time.Now(), done)
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}
