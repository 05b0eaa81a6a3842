package cluster

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestContainerGetsItsSecurityContext: the node agent runs a container,
// and every exec in it, with what its securityContext gives, as a runtime
// does: the default capability set without one; only the added ones after
// drop ALL; no_new_privs without privilege escalation; the user asked.
func TestContainerGetsItsSecurityContext(t *testing.T) {
	root, no := int64(0), false
	createPod(t, testPod("caps-default", sleeper, nil))
	createPod(t, testPod("caps-ipclock", sleeper, func(p *corev1.Pod) {
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: &root, AllowPrivilegeEscalation: &no,
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"IPC_LOCK"}}}
	}))
	nobody := int64(65534)
	createPod(t, testPod("caps-nobody", sleeper, func(p *corev1.Pod) {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &nobody}
	}))
	checks := map[string][]string{
		// containerd's default set: CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP
		// NET_BIND_SERVICE NET_RAW SYS_CHROOT MKNOD AUDIT_WRITE SETFCAP
		"caps-default": {"CapEff:\t00000000a80425fb", "CapBnd:\t00000000a80425fb", "NoNewPrivs:\t0", "Uid:\t0\t"},
		"caps-ipclock": {"CapEff:\t0000000000004000", "CapBnd:\t0000000000004000", "NoNewPrivs:\t1", "Uid:\t0\t"},
		"caps-nobody":  {"CapEff:\t0000000000000000", "Uid:\t65534\t"},
	}
	if toolsRoot != "" { // the same in a pod running in the tools image (setpriv from its util-linux)
		createPod(t, testPod("caps-image", sleeper, func(p *corev1.Pod) {
			p.Spec.Containers[0].Image = ToolsImage
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: &root, AllowPrivilegeEscalation: &no,
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"IPC_LOCK"}}}
		}))
		checks["caps-image"] = checks["caps-ipclock"]
	}
	for name, want := range checks {
		waitPod(t, name, 30*time.Second, "Ready", isReady)
		out, _, err := execIn(t, name, "websocket", "", "cat", "/proc/self/status")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: /proc/self/status lacks %q:\n%s", name, w, out)
			}
		}
	}
}

// TestOpenShiftSecurityStandIn: with ServeOpenShiftSecurity, discovery
// shows security.openshift.io and pod admission follows the SCCs: as a
// ServiceAccount without any SCC grant, a pod within restricted-v2 is
// admitted and one adding IPC_LOCK is refused in OpenShift's words; with
// deploy/openshift applied, ServiceAccount rdmabench may add what the
// SCC allows and nothing more. Undone, the cluster is plain again.
func TestOpenShiftSecurityStandIn(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	undo, err := c.ServeOpenShiftSecurity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := undo(context.Background()); err != nil {
			t.Error(err)
		}
	})
	groups, err := c.Client().Discovery().ServerGroups()
	if err != nil || !servesGroup(groups, "security.openshift.io") {
		t.Fatalf("discovery does not serve security.openshift.io: %v", err)
	}
	apply := func(f string) {
		t.Helper()
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := c.Apply(ctx, data)
		t.Cleanup(func() { _ = c.Delete(context.Background(), objs) })
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	// The namespace, ServiceAccount and Role a user applies first.
	apply("../../../deploy/rbac.yaml")
	as := func(sa string) kubernetes.Interface {
		cfg := c.RESTConfig()
		cfg.Impersonate.UserName = "system:serviceaccount:rdmabench:" + sa
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	root, no := int64(0), false
	pod := func(sa string, hostNet bool, caps ...corev1.Capability) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "rdmabench"}, Spec: corev1.PodSpec{
			ServiceAccountName: sa, HostNetwork: hostNet,
			SecurityContext: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "tools", Image: "t", SecurityContext: &corev1.SecurityContext{RunAsUser: &root,
				AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: caps}}}}}}
	}
	dryRun := func(cs kubernetes.Interface, p *corev1.Pod) error {
		_, err := cs.CoreV1().Pods("rdmabench").Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	restricted := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "rdmabench"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "t"}}}}
	// Bounded: the Role just applied reaches the RBAC authorizer through
	// its informers (CI saw "cannot create resource pods" once, right after).
	if err := waitFor(ctx, func() error { return dryRun(as("rdmabench"), restricted) }); err != nil {
		t.Errorf("a pod within restricted-v2: %v", err)
	}
	err = dryRun(as("rdmabench"), pod("rdmabench", false, "IPC_LOCK"))
	for _, w := range []string{`unable to validate against any security context constraint`,
		`provider "restricted-v2": .containers[tools].capabilities.add: Invalid value: "IPC_LOCK": capability may not be added`,
		`.containers[tools].runAsUser: Invalid value: 0`, `provider "rdmabench": Forbidden: not usable by user or serviceaccount`} {
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), w) {
			t.Errorf("without the SCC: %v; want %q", err, w)
		}
	}

	apply("../../../deploy/openshift/scc.yaml")
	apply("../../../deploy/openshift/rbac.yaml")
	err = waitFor(ctx, func() error {
		return dryRun(as("rdmabench"), pod("rdmabench", false, "IPC_LOCK", "SETUID", "SETGID", "SYS_CHROOT"))
	})
	if err != nil {
		t.Errorf("with deploy/openshift applied, the rdmabench pod: %v", err)
	}
	for _, c := range []struct {
		p    *corev1.Pod
		want string
	}{
		{pod("rdmabench", false, "IPC_LOCK", "SYS_ADMIN"), `provider "rdmabench": .containers[tools].capabilities.add: Invalid value: "SYS_ADMIN": capability may not be added`},
		{pod("rdmabench", true, "IPC_LOCK"), `provider "rdmabench": .spec.securityContext.hostNetwork: Invalid value: true`},
	} {
		if err := dryRun(as("rdmabench"), c.p); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v; want %q", err, c.want)
		}
	}
}

// waitFor retries f (bounded) while it fails: RBAC and policy parameters
// the apiserver reads from informers take a moment to be seen.
func waitFor(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// TestShmSizedAsTheMemoryVolume: a pod in an image whose memory-backed
// emptyDir is mounted at /dev/shm gets a /dev/shm of its sizeLimit, as a
// kubelet sizes that tmpfs.
func TestShmSizedAsTheMemoryVolume(t *testing.T) {
	if toolsRoot == "" {
		t.Skip("no tools image (make image)")
	}
	size := resource.MustParse("96Mi")
	createPod(t, testPod("shm", sleeper, func(p *corev1.Pod) {
		p.Spec.Containers[0].Image = ToolsImage
		p.Spec.Volumes = []corev1.Volume{{Name: "dshm", VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &size}}}}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}}
	}))
	waitPod(t, "shm", 30*time.Second, "Ready", isReady)
	out, _, err := execIn(t, "shm", "websocket", "", "df", "-B1", "--output=size", "/dev/shm")
	if err != nil || !strings.Contains(out, "100663296") {
		t.Fatalf("/dev/shm: %v\n%s", err, out)
	}
}
