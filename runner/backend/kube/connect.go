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
}

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
	// Many pods are polled and exec'd at once; the client's default
	// 5 QPS would throttle a 64-endpoint run.
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kube: client: %w", err)
	}
	return cfg, cs, nil
}
