package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// node is a recorded soft-RoCE VM's sysfs (rxe0 on eth0, port ACTIVE)
// with its uverbs class entry and /dev/infiniband files, in a temporary
// folder the test may change.
func node(t *testing.T) (sys, dev string) {
	t.Helper()
	root := t.TempDir()
	sys = filepath.Join(root, "sysroot")
	if out, err := exec.Command("cp", "-a", "../../../nic/testdata/sysfs/rxe-vm", sys).CombinedOutput(); err != nil {
		t.Fatalf("copy the recorded tree: %v: %s", err, out)
	}
	write(t, filepath.Join(sys, "sys/class/infiniband_verbs/uverbs0/ibdev"), "rxe0\n")
	dev = filepath.Join(root, "dev")
	write(t, filepath.Join(dev, "infiniband/uverbs0"), "")
	write(t, filepath.Join(dev, "infiniband/rdma_cm"), "")
	return sys, dev
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindDevice(t *testing.T) {
	sys, dev := node(t)
	d, err := findDevice(sys, dev, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dev, "infiniband/rdma_cm"), filepath.Join(dev, "infiniband/uverbs0")}
	if d.Name != "rxe0" || !d.Active || strings.Join(d.Files, " ") != strings.Join(want, " ") {
		t.Errorf("found %+v; want rxe0, active, files %v", d, want)
	}
	if _, err := findDevice(sys, dev, "eth1"); err == nil || !strings.Contains(err.Error(), `no RDMA device on netdev "eth1"; found rxe0 port 1 on "eth0"`) {
		t.Errorf("eth1: %v", err)
	}
	if _, err := findDevice(t.TempDir(), dev, "eth0"); err == nil || !strings.Contains(err.Error(), "rdma link add rxe0 type rxe netdev eth0") {
		t.Errorf("no RDMA device: %v", err)
	}
	_ = os.RemoveAll(filepath.Join(sys, "sys/class/infiniband_verbs"))
	if _, err := findDevice(sys, dev, "eth0"); err == nil || !strings.Contains(err.Error(), "load ib_uverbs") {
		t.Errorf("no uverbs: %v", err)
	}
}

// fakeKubelet is the kubelet's registration service on dir/kubelet.sock.
type fakeKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	mu   sync.Mutex
	reqs []*pluginapi.RegisterRequest
}

func (k *fakeKubelet) Register(_ context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reqs = append(k.reqs, r)
	return &pluginapi.Empty{}, nil
}

func (k *fakeKubelet) registered() []*pluginapi.RegisterRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]*pluginapi.RegisterRequest(nil), k.reqs...)
}

// TestPluginAgainstKubelet: the plugin registers with the kubelet's socket,
// lists its shares as Healthy, gives each container the device files,
// turns Unhealthy when the port goes down, refuses unknown units, and
// notices that a restarted kubelet removed its socket.
func TestPluginAgainstKubelet(t *testing.T) {
	sys, dev := node(t)
	dir, err := os.MkdirTemp("", "rdmaplugin") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	kl := &fakeKubelet{}
	l, err := net.Listen("unix", filepath.Join(dir, "kubelet.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ks := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(ks, kl)
	go func() { _ = ks.Serve(l) }()
	defer ks.Stop()

	p := newPlugin("rdma/rxe", 2, func() (rdmaDevice, error) { return findDevice(sys, dev, "eth0") })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- serveOnce(ctx, p, dir, "rdma_rxe.sock") }()
	waitFor(t, "registration", func() bool { return len(kl.registered()) == 1 })
	r := kl.registered()[0]
	if r.ResourceName != "rdma/rxe" || r.Endpoint != "rdma_rxe.sock" || r.Version != pluginapi.Version {
		t.Fatalf("registered %+v", r)
	}

	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "rdma_rxe.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pluginapi.NewDevicePluginClient(conn)
	stream, err := client.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	list := func() string {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, d := range resp.Devices {
			s = append(s, d.ID+"="+d.Health)
		}
		return strings.Join(s, " ")
	}
	if got := list(); got != "rxe0-0=Healthy rxe0-1=Healthy" {
		t.Fatalf("first list %q", got)
	}

	alloc, err := client.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"rxe0-1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range alloc.ContainerResponses[0].Devices {
		if s.HostPath != s.ContainerPath || s.Permissions != "rw" {
			t.Errorf("spec %+v", s)
		}
		paths = append(paths, filepath.Base(s.HostPath))
	}
	if strings.Join(paths, " ") != "rdma_cm uverbs0" {
		t.Errorf("allocated %v; want rdma_cm and uverbs0", paths)
	}
	if _, err := client.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"rxe0-7"}}}}); err == nil || !strings.Contains(err.Error(), `unknown device "rxe0-7"`) {
		t.Errorf("unknown unit: %v", err)
	}

	write(t, filepath.Join(sys, "sys/class/infiniband/rxe0/ports/1/state"), "1: DOWN\n")
	p.refresh()
	if got := list(); got != "rxe0-0=Unhealthy rxe0-1=Unhealthy" {
		t.Errorf("after port down %q", got)
	}

	// A kubelet that starts removes every socket in its folder.
	_ = os.Remove(filepath.Join(dir, "rdma_rxe.sock"))
	select {
	case err := <-served:
		if !errors.Is(err, errKubeletRestarted) {
			t.Errorf("serveOnce after its socket went: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serveOnce did not notice its socket was removed")
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOptions(t *testing.T) {
	for _, args := range [][]string{{"--shares", "0"}, {"--resource", "rxe"}, {"--resource", "rdma/"}} {
		var out strings.Builder
		if code := run(args, &out); code != 2 || !strings.Contains(out.String(), "rdmaplugin: --") {
			t.Errorf("%v: exit %d, %q", args, code, out.String())
		}
	}
}
