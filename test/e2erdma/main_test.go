package e2erdma

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// record rewrites the fixtures (testdata/softroce/, the rxe sysfs tree)
// from this run's real outputs.
var record = flag.Bool("record", false, "write the real outputs of this run to testdata/softroce and nic/testdata/sysfs/rxe-vm (and rxe-vm-rails)")

// pair is the booted VM pair, shared by the lane's tests.
var pair *Pair

// repoRoot is the repository root (this package is test/e2erdma).
var repoRoot, _ = filepath.Abs("../..")

// TestMain boots the VMs once when RDMABENCH_SOFTROCE names the image
// directory (`make e2e-rdma` sets it); without it the lane is skipped.
func TestMain(m *testing.M) {
	flag.Parse()
	work := os.Getenv("RDMABENCH_SOFTROCE")
	if work == "" {
		fmt.Println("e2erdma: RDMABENCH_SOFTROCE is not set; the soft-RoCE lane runs with `make e2e-rdma`")
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	p, err := Boot(ctx, DefaultConfig(work))
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2erdma: booting the VMs:", err)
		os.Exit(1)
	}
	fmt.Printf("e2erdma: both VMs up in %.1fs\n", p.BootTime.Seconds())
	pair = p
	code := m.Run()
	p.Stop()
	os.Exit(code)
}

func needVMs(t *testing.T) {
	if pair == nil {
		t.Skip("soft-RoCE VMs not booted (run `make e2e-rdma`)")
	}
}
