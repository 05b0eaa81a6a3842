package ssh

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestStartEtcdNotSomeoneElses: the port the run draws for its etcd is
// already served by another etcd on the host (a second run, the host's
// own). The run's etcd cannot bind it; the runner must not take the other
// etcd for its own, but draw another port, and answer with its own etcd
// there (known by its member name); Cleanup stops it.
func TestStartEtcdNotSomeoneElses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rdmabench")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "rdmabench"), "../../../cmd/rdmabench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH")) // the test server's shells see this PATH
	ctx := ctxT(t, 2*time.Minute)

	taken, free := freePort(t), freePort(t)
	other, err := runetcd.Start(ctx, runetcd.Config{ClientURLs: []string{"http://127.0.0.1:" + strconv.Itoa(taken)}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	r := newRig(t, nil)
	h := r.host
	h.DataAddress = "127.0.0.1"
	kh := filepath.Join(r.dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(r.srv.addr)}, r.srv.hostKey.PublicKey())
	if err := os.WriteFile(kh, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := New([]scenarios.Host{h}, Options{DialTimeout: 2 * time.Second, HandshakeTimeout: 2 * time.Second, KillGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ports := []int{taken, free}
	b.pickEtcdPort = func() int {
		if len(ports) == 0 { // the free port was called taken too
			t.Errorf("a third port drawn: port %d was taken for someone else's", free)
			return free
		}
		p := ports[0]
		ports = ports[1:]
		return p
	}
	if _, err := b.Provision(ctx, []endpoint.Endpoint{r.ep}); err != nil {
		t.Fatal(err)
	}
	toolURL, localURL, err := b.StartEtcd(ctx)
	if err != nil {
		t.Fatalf("StartEtcd: %v", err)
	}
	if want := "http://127.0.0.1:" + strconv.Itoa(free); toolURL != want {
		t.Errorf("tool URL %s; want %s (the taken port left alone)", toolURL, want)
	}
	name, err := memberName(ctx, localURL)
	if err != nil || !strings.HasPrefix(name, "rdmabench-") {
		t.Errorf("the etcd behind the forward is %q (%v); want the run's own", name, err)
	}
	if err := b.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(free)), time.Second); err == nil {
		c.Close()
		t.Errorf("the run's etcd still listens after Cleanup")
	}
	if c, err := other.Client(); err == nil {
		defer c.Close()
		if err := runetcd.Answers(ctx, c); err != nil {
			t.Errorf("the other etcd was disturbed: %v", err)
		}
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
