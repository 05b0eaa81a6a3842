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
	cfg := DefaultConfig(work)
	if os.Getenv("RDMABENCH_VM_NODES") == "1" {
		// The node lane (make e2e-nodes) uses rxe0 alone: without the
		// second rail, rdmabench's discovery and preflight read one GID
		// table per VM instead of two (1,024 entries each, a sysfs read
		// costing about 0.1 s under emulation on a loaded host).
		cfg.RailPort = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	p, err := Boot(ctx, cfg)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2erdma: booting the VMs:", err)
		os.Exit(1)
	}
	fmt.Printf("e2erdma: both VMs up in %.1fs\n", p.BootTime.Seconds())
	// The lane's first assertion: every RDMA test needs the data link.
	ctx, cancel = context.WithTimeout(context.Background(), dataLinkBound)
	err = p.DataLink(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2erdma: right after boot:", err)
		p.Stop()
		os.Exit(1)
	}
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

// needDataLink is needVMs for a test that sends traffic between the VMs:
// the data link must work. One that an earlier test left broken is
// repaired (said in the log: that test's clean-up is at fault); one that
// cannot be repaired fails the test, naming what is broken.
func needDataLink(t *testing.T) {
	t.Helper()
	needVMs(t)
	ctx, cancel := context.WithTimeout(context.Background(), dataLinkBound)
	defer cancel()
	err := pair.DataLink(ctx)
	if err == nil {
		return
	}
	did, rerr := pair.RepairDataLink(ctx)
	if rerr != nil {
		t.Fatalf("%v\nrepair (%s): %v", err, did, rerr)
	}
	t.Logf("an earlier test left the data link broken; repaired (%s): %v", did, err)
}

// dataLinkKept fails t when the data link no longer works after its runs
// (a clean-up that broke it), then repairs it for the tests that follow.
func dataLinkKept(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dataLinkBound)
	defer cancel()
	err := pair.DataLink(ctx)
	if err == nil {
		return
	}
	t.Errorf("%s left the data link broken: %v", t.Name(), err)
	did, rerr := pair.RepairDataLink(ctx)
	if rerr != nil {
		t.Errorf("repair (%s): %v", did, rerr)
		return
	}
	t.Logf("data link repaired: %s", did)
}
