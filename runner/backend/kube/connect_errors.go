package kube

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rdmabench/rdmabench/exitcode"

	"k8s.io/client-go/tools/clientcmd"
)

// configError words a failure to load the client configuration. client-go's
// own words for "nothing configured" point at KUBERNETES_MASTER, which no
// one sets today; ours say what was looked at and what to set.
func configError(o ConnectOptions, err error) error {
	if !clientcmd.IsEmptyConfig(err) {
		return badConfig{fmt.Errorf("kube: no usable cluster configuration: %w (set KUBECONFIG or --kubeconfig, or run in a pod)", err)}
	}
	home, _ := os.UserHomeDir()
	def := filepath.Join(home, ".kube", "config")
	where := "KUBECONFIG is unset"
	if v := os.Getenv("KUBECONFIG"); v != "" {
		where = fmt.Sprintf("KUBECONFIG=%s names no usable file", v)
	}
	if o.Kubeconfig != "" {
		where = fmt.Sprintf("--kubeconfig %s holds no cluster", o.Kubeconfig)
	}
	return badConfig{fmt.Errorf("kube: no Kubernetes cluster configured: %s, %s does not exist and rdmabench is not running in a pod "+
		"(give --kubeconfig FILE or set KUBECONFIG to your cluster's kubeconfig; to try rdmabench without a cluster, "+
		"`make kube-up` starts a local test cluster and prints its kubeconfig)", where, def)}
}

// badConfig is a kubeconfig missing or unreadable: the user's
// configuration (exit 2), not a harness failure (exit 3).
type badConfig struct{ err error }

func (e badConfig) Error() string { return e.err.Error() }
func (e badConfig) Unwrap() error { return e.err }
func (e badConfig) ExitCode() int { return exitcode.Usage }
