package kube

import (
	"errors"

	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/exitcode"
)

// TestConnectWithoutConfigSaysSoInOurWords: no kubeconfig anywhere and not
// in a pod is said in terms of what to set, not client-go's
// KUBERNETES_MASTER (an apiserver flag of another era).
func TestConnectWithoutConfigSaysSoInOurWords(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	_, _, err := Connect(ConnectOptions{})
	if err == nil {
		t.Fatal("Connect without any configuration succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"no Kubernetes cluster configured", "KUBECONFIG is unset", filepath.Join(home, ".kube", "config") + " does not exist", "not running in a pod", "--kubeconfig", "make kube-up"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "KUBERNETES_MASTER") {
		t.Errorf("error still speaks client-go's words:\n%s", msg)
	}

	missing := filepath.Join(home, "nope.yaml")
	_, _, err2 := Connect(ConnectOptions{Kubeconfig: missing})
	if err2 == nil || !strings.Contains(err2.Error(), missing) || strings.Contains(err2.Error(), "KUBERNETES_MASTER") {
		t.Errorf("--kubeconfig %s (missing): %v", missing, err2)
	}
	// Both are the configuration's fault, not the harness's: exit 2.
	for _, e := range []error{err, err2} {
		var ec interface{ ExitCode() int }
		if !errors.As(e, &ec) || ec.ExitCode() != exitcode.Usage {
			t.Errorf("%v: not a configuration error (exit %d)", e, exitcode.Usage)
		}
	}
}
