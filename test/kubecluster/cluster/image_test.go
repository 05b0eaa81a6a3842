package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

func needImage(t *testing.T) {
	t.Helper()
	needCluster(t)
	if toolsRoot == "" {
		t.Skip("no tools image (make image)")
	}
}

// A pod of the tools image runs in its own root: the image's files, a /tmp
// of its own, the downward API, placeholder GPUs, the extra bin dir first
// on PATH, nothing mounted on the host, everything gone with the pod.
func TestPodRunsInTheToolsImage(t *testing.T) {
	needImage(t)
	mk := func(name string, gpus int64) {
		createPod(t, testPod(name, nil, func(p *corev1.Pod) {
			c := &p.Spec.Containers[0]
			c.Image = ToolsImage
			c.Env = []corev1.EnvVar{
				{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
				{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
				{Name: "GREETING", Value: "on $(NODE)"},
			}
			if gpus > 0 {
				q := *resource.NewQuantity(gpus, resource.DecimalSI)
				c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": q}, Requests: corev1.ResourceList{"nvidia.com/gpu": q}}
			}
		}))
	}
	mk("img-a", 2)
	mk("img-b", 0)
	a := waitPod(t, "img-a", 60*time.Second, "ready", isReady)
	waitPod(t, "img-b", 60*time.Second, "ready", isReady)
	sh := func(pod, script string) string {
		out, stderr, err := execIn(t, pod, "websocket", "", "sh", "-c", script)
		if err != nil {
			t.Fatalf("%s: %s: %v %s", pod, script, err, stderr)
		}
		return strings.TrimSpace(out)
	}
	if got := sh("img-a", "for p in rdmabench ucx_perftest ib_write_bw rping mpirun iperf3 sshd; do command -v $p; done | tr '\\n' ' '"); !strings.Contains(got, "/usr/local/bin/rdmabench") || !strings.Contains(got, "ib_write_bw") {
		t.Errorf("tools in the image: %q", got)
	}
	sh("img-a", "echo a > /tmp/mine")
	if got := sh("img-b", "cat /tmp/mine 2>/dev/null || echo none"); got != "none" {
		t.Errorf("pods share /tmp: %q", got)
	}
	if _, err := os.Stat("/tmp/mine"); err == nil {
		t.Error("a pod's /tmp is the host's")
	}
	if got := sh("img-a", "echo $POD_IP $GREETING"); got != a.Status.PodIP+" on "+a.Spec.NodeName {
		t.Errorf("downward API: %q, want %q", got, a.Status.PodIP+" on "+a.Spec.NodeName)
	}
	if got := sh("img-a", "ls /dev | grep '^nvidia[0-9]' | tr '\\n' ' '; echo $NVIDIA_VISIBLE_DEVICES"); got != "nvidia0 nvidia1 0,1" {
		t.Errorf("GPU placeholders: %q", got)
	}
	if got := sh("img-b", "ls /dev | grep -c '^nvidia' || true"); got != "0" {
		t.Errorf("a pod without GPUs sees %s /dev/nvidia*", got)
	}
	if got := sh("img-b", "hello-extra; grep -c . /etc/hostname; test -d /dev/shm && echo shm"); got != "extra-bin\n1\nshm" {
		t.Errorf("extra bin dir, hostname, /dev/shm: %q", got)
	}
	if got := sh("img-a", "grep -c ' /tmp ' /proc/self/mountinfo"); got == "0" {
		t.Error("no /tmp mount in the pod")
	}
	host, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(host), "/rootfs/root") {
		t.Error("a pod's mounts leaked into the host's mount table")
	}
}

// Port-forward reaches a port inside the pod's network namespace: the
// image's `rdmabench etcd`, as the kube backend reaches nixlbench's.
func TestPortForwardToAPod(t *testing.T) {
	needImage(t)
	c := needCluster(t)
	createPod(t, testPod("img-etcd", []string{"rdmabench", "etcd", "--listen-client-urls", "http://0.0.0.0:2379",
		"--advertise-client-urls", "http://127.0.0.1:2379"}, func(p *corev1.Pod) { p.Spec.Containers[0].Image = ToolsImage }))
	waitPod(t, "img-etcd", 60*time.Second, "ready", isReady)
	// Forward only once etcd listens: a forwarded connection the pod
	// refuses ends client-go's port-forwarder.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _, _ := execIn(t, "img-etcd", "websocket", "", "cat", "/proc/net/tcp", "/proc/net/tcp6")
		if listens(out, 2379) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("etcd in the pod never listened on 2379")
		}
		time.Sleep(250 * time.Millisecond)
	}
	cfg := c.RESTConfig()
	req := c.Client().CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("img-etcd").SubResource("portforward")
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", req.URL()),
		[]string{"127.0.0.1"}, []string{"0:2379"}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = fw.ForwardPorts() }()
	<-ready
	ports, _ := fw.GetPorts()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		// Each try has its own bound: a request forwarded before etcd
		// listens may hang rather than be refused.
		try, cancelTry := context.WithTimeout(ctx, 3*time.Second)
		hreq, _ := http.NewRequestWithContext(try, "GET", fmt.Sprintf("http://127.0.0.1:%d/version", ports[0].Local), nil)
		resp, err := http.DefaultClient.Do(hreq)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if strings.Contains(string(b), "etcdserver") {
				cancelTry()
				return
			}
			err = fmt.Errorf("%s", b)
		}
		cancelTry()
		if ctx.Err() != nil {
			t.Fatalf("etcd through port-forward: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// listens reports whether a /proc/net/tcp{,6} table has port in LISTEN.
func listens(table string, port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
			return true
		}
	}
	return false
}
