package kube

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// Labels and ports of nixlbench's etcd in the cluster.
const (
	LabelRole = "rdmabench.io/role"
	roleEtcd  = "etcd"
	etcdPort  = 2379
	// hostNetworkEtcdPort is the etcd's port when the run's pods use the
	// host network (cluster.hostNetwork), as its pod then does too: on a
	// node 2379 is often the control plane's own etcd.
	hostNetworkEtcdPort = 12379
)

// etcdClientPort is the port the run's etcd serves nixlbench on.
func (b *Backend) etcdClientPort() int {
	if b.sc.Cluster.HostNetwork {
		return hostNetworkEtcdPort
	}
	return etcdPort
}

// etcdScript starts the same embedded etcd as `rdmabench etcd`, listening
// on the pod's IP (from the downward API), where nixlbench in the other
// pods reaches it, and on loopback, where the port-forward arrives; not on
// every address: on the host network that would be every NIC of the node.
// Its peer URL is a free loopback port (rdmabench etcd's default): nothing
// else joins it.
func etcdScript(port int) string {
	// An IPv6 pod IP goes in brackets in a URL.
	return fmt.Sprintf(`case "$POD_IP" in *:*) ip="[$POD_IP]" ;; *) ip="$POD_IP" ;; esac
exec rdmabench etcd --listen-client-urls "http://$ip:%d,http://127.0.0.1:%d" --advertise-client-urls "http://$ip:%d"`, port, port, port)
}

func (b *Backend) etcdName() string { return "rdmabench-" + b.opts.RunID + "-etcd" }

// StartEtcd runs nixlbench's etcd in the cluster for this run: a pod from
// the tools image (which holds rdmabench) and a Service naming it, both
// labelled with the run and removed by Cleanup. It returns the URL the
// tools use (the pod's IP: it needs neither cluster DNS nor kube-proxy)
// and a local URL for the runner's own client, through a port-forward.
func (b *Backend) StartEtcd(ctx context.Context) (toolURL, localURL string, err error) {
	owner, err := b.ensureOwner(ctx)
	if err != nil {
		return "", "", err
	}
	pod, svc := b.etcdObjects(owner)
	if err := b.retryCreate(ctx, func() error {
		_, err := b.client.CoreV1().Pods(b.namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}, func() (metav1.Object, error) {
		return b.client.CoreV1().Pods(b.namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	}); err != nil {
		return "", "", createError(pod.Name, err)
	}
	if err := b.retryCreate(ctx, func() error {
		_, err := b.client.CoreV1().Services(b.namespace).Create(ctx, svc, metav1.CreateOptions{})
		return err
	}, func() (metav1.Object, error) {
		return b.client.CoreV1().Services(b.namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	}); err != nil {
		se := createError(svc.Name, err)
		se.Kind = "service"
		return "", "", se
	}
	policy := b.etcdPolicy(owner)
	if err := b.retryCreate(ctx, func() error {
		_, err := b.client.NetworkingV1().NetworkPolicies(b.namespace).Create(ctx, policy, metav1.CreateOptions{})
		return err
	}, func() (metav1.Object, error) {
		return b.client.NetworkingV1().NetworkPolicies(b.namespace).Get(ctx, policy.Name, metav1.GetOptions{})
	}); err != nil {
		se := createError(policy.Name, err)
		se.Kind = "networkpolicy"
		if apierrors.IsForbidden(err) {
			se.Msg += " (the etcd has no authentication: only this policy keeps other pods out of it; grant create on networkpolicies, as deploy/rbac.yaml does)"
		}
		return "", "", se
	}
	timeout := DefaultStartupTimeout
	if d := b.sc.Cluster.StartupTimeout.Value; d > 0 {
		timeout = d
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ready, err := b.waitPodReady(wctx, pod.Name)
	if err != nil {
		return "", "", err
	}
	// Forward only once etcd listens: a forwarded connection the pod
	// refuses ends client-go's port-forwarder for good.
	port := b.etcdClientPort()
	if err := b.waitListening(wctx, ready, port); err != nil {
		return "", "", err
	}
	local, err := b.portForward(pod.Name, port)
	if err != nil {
		return "", "", err
	}
	if err := etcdAnswers(wctx, "http://"+local); err != nil {
		return "", "", &StartupError{Pod: pod.Name, Reason: "EtcdNotServing", Msg: err.Error() + " (kubectl logs -n " + b.namespace + " " + pod.Name + ")"}
	}
	guard := fmt.Sprintf("NetworkPolicy %s admits only the run's pods to it (where the cluster's network plugin enforces NetworkPolicy: not every one does, and then any pod can reach it)", policy.Name)
	if b.sc.Cluster.HostNetwork {
		// NetworkPolicy does not apply to pods on the host network.
		guard = fmt.Sprintf("on the host network, which NetworkPolicy %s does not cover: anything that reaches the node's port %d reaches it", policy.Name, port)
	}
	b.progressf("etcd for nixlbench: pod %s (%s:%d), service %s; %s", pod.Name, ready.Status.PodIP, port, svc.Name, guard)
	return "http://" + net.JoinHostPort(ready.Status.PodIP, strconv.Itoa(port)), "http://" + local, nil
}

// waitListening polls the pod's listen table through exec until port is
// in LISTEN, bounded by ctx.
func (b *Backend) waitListening(ctx context.Context, pod *corev1.Pod, port int) error {
	want := fmt.Sprintf(":%04X", port)
	for {
		var out bytes.Buffer
		code, err := b.stream(ctx, target{pod: pod.Name}, []string{"cat", "/proc/net/tcp", "/proc/net/tcp6"}, &out, io.Discard)
		if err == nil && code == 0 {
			for _, line := range strings.Split(out.String(), "\n") {
				f := strings.Fields(line)
				if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return &StartupError{Pod: pod.Name, Reason: "EtcdNotListening", Msg: fmt.Sprintf("nothing listens on port %d in the pod (kubectl logs -n %s %s)", port, b.namespace, pod.Name)}
		case <-time.After(b.opts.PollInterval):
		}
	}
}

// etcdAnswers waits until the etcd behind url serves /version: a Ready
// pod may not listen yet, and a request forwarded before it does can hang
// rather than be refused, so each try has its own short bound.
func etcdAnswers(ctx context.Context, url string) error {
	var last error
	for {
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		req, _ := http.NewRequestWithContext(try, http.MethodGet, url+"/version", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "etcdserver") {
				cancel()
				return nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
		cancel()
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd does not answer through the port-forward: %v", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// etcdObjects are nixlbench's etcd pod and its Service, owned by owner
// (nil when printing manifests, before the owner exists).
func (b *Backend) etcdObjects(owner *metav1.OwnerReference) (*corev1.Pod, *corev1.Service) {
	labels := b.runLabels()
	labels[LabelRole] = roleEtcd
	grace := int64(2)
	port := int32(b.etcdClientPort())
	meta := metav1.ObjectMeta{Name: b.etcdName(), Namespace: b.namespace, Labels: labels}
	if owner != nil {
		meta.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: container, Image: b.sc.Cluster.ToolsImageOf(), ImagePullPolicy: corev1.PullPolicy(b.sc.Cluster.ImagePullPolicy),
				Command: []string{"sh", "-c", etcdScript(int(port))},
				Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				Ports:           []corev1.ContainerPort{{Name: "client", ContainerPort: port}},
				SecurityContext: b.etcdSecurityContext(),
				Resources:       etcdResources(),
			}},
			SecurityContext: podSecurityContext(),
			// With the tools' pods: where they live on the host network
			// (their RDMA NIC is the node's), the etcd they reach does too.
			HostNetwork:                   b.sc.Cluster.HostNetwork,
			TerminationGracePeriodSeconds: &grace,
			NodeSelector:                  b.sc.Cluster.NodeSelector,
			Tolerations:                   clusterTolerations(b.sc.Cluster.Tolerations),
			ServiceAccountName:            b.sc.Cluster.ServiceAccount,
			EnableServiceLinks:            new(bool),
		},
	}
	for _, s := range b.sc.Cluster.ImagePullSecrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: *meta.DeepCopy(),
		Spec: corev1.ServiceSpec{Selector: map[string]string{LabelRun: b.opts.RunID, LabelRole: roleEtcd},
			Ports: []corev1.ServicePort{{Name: "client", Port: port, TargetPort: intstr.FromInt32(port)}}},
	}
	return pod, svc
}

// waitPodReady waits for one pod, failing fast as Provision does.
func (b *Backend) waitPodReady(ctx context.Context, name string) (*corev1.Pod, error) {
	firstSeen := map[string]time.Time{}
	for {
		p, err := b.client.CoreV1().Pods(b.namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if podReady(p) {
				return p, nil
			}
			if err := b.podProblem(ctx, p, firstSeen, b.runEvents(ctx)); err != nil {
				return nil, err
			}
		}
		select {
		case <-ctx.Done():
			state := "not found"
			if p != nil {
				state = podState(p)
			}
			return nil, &StartupError{Pod: name, Reason: "StartupTimeout", Msg: "not ready (" + state + ") within cluster.startupTimeout"}
		case <-time.After(b.opts.PollInterval):
		}
	}
}

// portForward forwards a free local port to the pod's port through the
// API (WebSocket tunnelling, SPDY fallback) until Cleanup, and returns
// 127.0.0.1:PORT.
func (b *Backend) portForward(pod string, port int) (string, error) {
	req := b.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(b.namespace).Name(pod).SubResource("portforward")
	transport, upgrader, err := spdy.RoundTripperFor(b.config)
	if err != nil {
		return "", err
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", req.URL())
	if ws, err := portforward.NewSPDYOverWebsocketDialer(req.URL(), b.config); err == nil {
		dialer = portforward.NewFallbackDialer(ws, dialer, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
	}
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		return "", fmt.Errorf("kube: port-forward to pod %s:%d: %w", pod, port, err)
	case <-time.After(30 * time.Second):
		close(stop)
		return "", fmt.Errorf("kube: port-forward to pod %s:%d: not ready after 30s", pod, port)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(stop)
		return "", fmt.Errorf("kube: port-forward to pod %s:%d: no local port: %v", pod, port, err)
	}
	b.mu.Lock()
	b.stops = append(b.stops, stop)
	b.mu.Unlock()
	return fmt.Sprintf("127.0.0.1:%d", ports[0].Local), nil
}

// etcdUID is the etcd pod's user where the platform assigns none: nobody.
const etcdUID = int64(65534)

// etcdSecurityContext: the etcd needs no privilege at all, so its pod
// meets PodSecurity "restricted" and OpenShift's restricted-v2 SCC: no
// capability, no escalation, not root. OpenShift gives it a UID of the
// namespace's range (a fixed one would be refused); elsewhere it runs as
// nobody, since the image's user is root.
func (b *Backend) etcdSecurityContext() *corev1.SecurityContext {
	yes, no := true, false
	sc := &corev1.SecurityContext{AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes,
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	if b.plat != PlatformOpenShift {
		uid := etcdUID
		sc.RunAsUser = &uid
	}
	return sc
}

// etcdResources: nixlbench's rendezvous is a few keys; requests = limits,
// so that a namespace with a quota admits the pod.
func etcdResources() corev1.ResourceRequirements {
	list := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")}
	return corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
}

// etcdPolicy is the NetworkPolicy that lets only the run's pods reach its
// etcd's client port: the etcd has no authentication and no TLS, and
// holds only nixlbench's rendezvous, but any pod that can reach it could
// read or change that. The runner's port-forward enters through the pod's
// own loopback, which a policy does not filter. A network plugin that
// ignores NetworkPolicy (some do) ignores this one too.
func (b *Backend) etcdPolicy(owner *metav1.OwnerReference) *networkingv1.NetworkPolicy {
	labels := b.runLabels()
	labels[LabelRole] = roleEtcd
	meta := metav1.ObjectMeta{Name: b.etcdName(), Namespace: b.namespace, Labels: labels}
	if owner != nil {
		meta.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	port := intstr.FromInt32(int32(b.etcdClientPort()))
	tcp := corev1.ProtocolTCP
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta,
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: b.opts.RunID, LabelRole: roleEtcd}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: b.opts.RunID}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			}},
		},
	}
}
