package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/scenarios"
)

// kubeOptions pick the cluster like kubectl's flags.
type kubeOptions struct {
	kubeconfig string
	context    string
	namespace  string
}

func addKubeFlags(fl *pflag.FlagSet, o *kubeOptions) {
	fl.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (kube backend; default $KUBECONFIG, ~/.kube/config, or in-cluster config)")
	fl.StringVar(&o.context, "context", "", "kubeconfig context (kube backend; default the current one)")
	fl.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the pods (kube backend; overrides cluster.namespace)")
}

func newKubeBackend(sc *scenarios.Scenario, runID string, ko kubeOptions, progress io.Writer) (backend.Backend, error) {
	cfg, client, err := kube.Connect(kube.ConnectOptions{Kubeconfig: ko.kubeconfig, Context: ko.context})
	if err != nil {
		return nil, err
	}
	be, err := kube.New(sc, kube.Options{Client: client, Config: cfg, Namespace: ko.namespace, RunID: runID, Progress: progress})
	if err != nil {
		return nil, usageError{fmt.Errorf("%w", err)}
	}
	return be, nil
}

// scenarioPlatform is the platform a kube scenario names for planning
// without a cluster (plan, --dry-run): cluster.platform, else plain
// Kubernetes.
func scenarioPlatform(sc *scenarios.Scenario) string {
	if sc.Cluster == nil || sc.Cluster.Platform == "" || sc.Cluster.Platform == scenarios.PlatformAuto {
		return scenarios.PlatformKubernetes
	}
	return sc.Cluster.Platform
}

// backendPlatform is the platform of a kube backend's cluster
// (cluster.platform, else detected); "" for other backends.
func backendPlatform(ctx context.Context, be backend.Backend) (string, error) {
	if kb, ok := be.(*kube.Backend); ok {
		return kb.Platform(ctx)
	}
	return "", nil
}
