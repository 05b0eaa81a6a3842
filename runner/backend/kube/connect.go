package kube

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ConnectOptions pick a cluster the way kubectl does.
type ConnectOptions struct {
	// Kubeconfig is a path (--kubeconfig); empty uses $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster service account.
	Kubeconfig string
	// Context names a kubeconfig context (--context); empty: current.
	Context string
	// QPS and Burst bound the client's requests (--kube-qps,
	// --kube-burst); 0: DefaultQPS and DefaultBurst.
	QPS   float32
	Burst int
}

// The client's request rate when the command line does not say. Readiness
// is watched, not polled, so what spends the budget is pod creation (one
// request a pod) and execs (one a command): 50/s with bursts of 100 creates
// 256 pods in a few seconds without crowding a shared apiserver, whose
// default per-user fairness share is far above it.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// Connect loads the client configuration like kubectl: an explicit
// kubeconfig, else $KUBECONFIG or ~/.kube/config, else in-cluster config
// when running in a pod. The namespace comes from the scenario (or -n),
// not from the kubeconfig's context.
func Connect(o ConnectOptions) (*rest.Config, kubernetes.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, nil, configError(o, err)
	}
	cfg.UserAgent = "rdmabench"
	// Many pods are created and exec'd at once; the client's default
	// 5 QPS would throttle a 64-endpoint run.
	cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	if o.QPS > 0 {
		cfg.QPS = o.QPS
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kube: client: %w", err)
	}
	return cfg, cs, nil
}
