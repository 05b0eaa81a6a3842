// Package e2enixl is the real-nixlbench lane on one host (`make e2e-nixl
// NIXL_PREFIX=…`): a NIXL + nixlbench build with the ETCD runtime, made
// outside the repository, through `rdmabench run` and raw, side by side:
// two local processes over UCX, and two pods of the test control plane
// (network namespaces joined by its secondary network) over LIBFABRIC,
// whose plugin does not take loopback. Without RDMABENCH_NIXL_PREFIX every
// test skips and says why; CI replays the captures in testdata/nixl.
package e2enixl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var (
	// prefix is the NIXL build under test (bin/nixlbench, lib/plugins).
	prefix string
	// bin is the rdmabench binary under test (make build's).
	bin string
	// repoRoot is the repository root (this package is test/e2enixl).
	repoRoot, _ = filepath.Abs("../..")
)

func TestMain(m *testing.M) {
	prefix = os.Getenv("RDMABENCH_NIXL_PREFIX")
	bin = os.Getenv("RDMABENCH_BIN")
	if bin == "" {
		bin = filepath.Join(repoRoot, "bin", "rdmabench")
	}
	if prefix == "" {
		fmt.Println("e2enixl: RDMABENCH_NIXL_PREFIX is not set; the real-nixlbench lane runs with `make e2e-nixl NIXL_PREFIX=…`")
	}
	os.Exit(m.Run())
}

func needNixl(t *testing.T) {
	t.Helper()
	if prefix == "" {
		t.Skip("RDMABENCH_NIXL_PREFIX is not set (`make e2e-nixl NIXL_PREFIX=…`)")
	}
	if _, err := os.Stat(filepath.Join(prefix, "bin", "nixlbench")); err != nil {
		t.Fatalf("RDMABENCH_NIXL_PREFIX=%s: %v", prefix, err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v (make build first; make e2e-nixl does)", err)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
