package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/scenarios"
)

// kubeOptions pick the cluster like kubectl's flags.
type kubeOptions struct {
	kubeconfig string
	context    string
	namespace  string
	qps        float32
	burst      int
	exec       string
}

// The --kube-exec modes.
const (
	kubeExecSession    = "session"
	kubeExecPerCommand = "per-command"
)

func addKubeFlags(fl *pflag.FlagSet, o *kubeOptions) {
	fl.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (kube backend; default $KUBECONFIG, ~/.kube/config, or in-cluster config)")
	fl.StringVar(&o.context, "context", "", "kubeconfig context (kube backend; default the current one)")
	fl.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the pods (kube backend; overrides cluster.namespace)")
	fl.Float32Var(&o.qps, "kube-qps", kube.DefaultQPS, "requests per second to the Kubernetes API (kube backend): pod creations and execs spend it")
	fl.IntVar(&o.burst, "kube-burst", kube.DefaultBurst, "requests allowed in a burst above --kube-qps (kube backend)")
	fl.StringVar(&o.exec, "kube-exec", kubeExecSession, "how commands reach the pods (kube backend): session (one exec stream per pod container, commands run through it) or per-command (an exec each)")
}

// connect is kube.Connect with the command line's cluster and rate;
// a rate that cannot work is a usage error (exit 2).
func (o kubeOptions) connect() (*rest.Config, kubernetes.Interface, error) {
	if o.exec != kubeExecSession && o.exec != kubeExecPerCommand {
		return nil, nil, usageError{fmt.Errorf("--kube-exec %q: want %s or %s", o.exec, kubeExecSession, kubeExecPerCommand)}
	}
	if o.qps <= 0 || o.burst < 1 {
		return nil, nil, usageError{fmt.Errorf("--kube-qps %g --kube-burst %d: both must be positive (defaults %d and %d)", o.qps, o.burst, kube.DefaultQPS, kube.DefaultBurst)}
	}
	return kube.Connect(kube.ConnectOptions{Kubeconfig: o.kubeconfig, Context: o.context, QPS: o.qps, Burst: o.burst})
}

func newKubeBackend(sc *scenarios.Scenario, runID string, ko kubeOptions, progress io.Writer) (backend.Backend, error) {
	cfg, client, err := ko.connect()
	if err != nil {
		return nil, err
	}
	be, err := kube.New(sc, kube.Options{Client: client, Config: cfg, Namespace: ko.namespace, RunID: runID, Progress: progress,
		ExecPerCommand: ko.exec == kubeExecPerCommand})
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

// backendPlatform is the platform of the backend's cluster
// (backend.PlatformDetector: cluster.platform, else detected); "" for
// backends without one.
func backendPlatform(ctx context.Context, be backend.Backend) (string, error) {
	if d, ok := be.(backend.PlatformDetector); ok {
		return d.Platform(ctx)
	}
	return "", nil
}
