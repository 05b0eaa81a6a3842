package kube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"
	vkapi "github.com/virtual-kubelet/virtual-kubelet/node/api"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	utilexec "k8s.io/client-go/util/exec"
)

// execServer is a fake apiserver exec subresource: each exec runs
// through command (a local process) and is counted.
type execServer struct {
	mu      sync.Mutex
	execs   [][]string
	command func(ctx context.Context, argv []string) *exec.Cmd
}

func (e *execServer) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.execs)
}

func (e *execServer) handle(ctx context.Context, ns, pod, container string, argv []string, attach vkapi.AttachIO) error {
	// The bundle's PATH wrapper (withBundlePath) comes off: the tests'
	// commands see the argv the backend was given.
	if len(argv) > 4 && slices.Equal(argv[:4], []string{"sh", "-c", bundlePath, "sh"}) {
		argv = argv[4:]
	}
	e.mu.Lock()
	e.execs = append(e.execs, argv)
	e.mu.Unlock()
	cmd := e.command(ctx, argv)
	cmd.Stdout, cmd.Stderr = attach.Stdout(), attach.Stderr()
	cmd.WaitDelay = time.Second
	var stdin io.WriteCloser
	if attach.Stdin() != nil {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			return err
		}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if stdin != nil {
		go func() { _, _ = io.Copy(stdin, attach.Stdin()); stdin.Close() }()
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		if code < 0 {
			code = 137
		}
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	}
	return nil
}

// newExecBackend is a Backend whose exec subresource is es.
func newExecBackend(t *testing.T, es *execServer, progress io.Writer) *Backend {
	return newExecBackendProgress(t, es.handle, progress)
}

func newExecBackendWith(t *testing.T, handle vkapi.ContainerExecHandlerFunc) *Backend {
	return newExecBackendProgress(t, handle, nil)
}

func newExecBackendProgress(t *testing.T, handle vkapi.ContainerExecHandlerFunc, progress io.Writer) *Backend {
	t.Helper()
	r := mux.NewRouter()
	h := vkapi.HandleContainerExec(handle)
	// The apiserver's parameters, as the kubelet takes them.
	r.HandleFunc("/api/v1/namespaces/{namespace}/pods/{pod}/exec", func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		for from, to := range map[string]string{"stdin": "input", "stdout": "output", "stderr": "error"} {
			if q.Get(from) == "true" {
				q.Set(to, "1")
			}
		}
		req.URL.RawQuery = q.Encode()
		req.Form = nil
		h(w, req)
	})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(testScenario(), Options{Client: cs, Config: cfg, RunID: "20261124-061500-ab12", Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.closeSessions)
	return b
}
