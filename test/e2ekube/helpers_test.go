package e2ekube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

func installMultusAPI(ctx context.Context, c *cluster.Cluster) error { return c.InstallMultusAPI(ctx) }

// createNamespace makes ns (as a user would, before the run) and removes
// it at the end of the test.
func createNamespace(t *testing.T, c *cluster.Cluster, ns string) {
	t.Helper()
	rc := c.Client().CoreV1().RESTClient()
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
	if err := rc.Post().AbsPath("/api/v1/namespaces").SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(context.Background()).Error(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client().CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
}

// createNAD makes a NetworkAttachmentDefinition, as a cluster admin would.
func createNAD(t *testing.T, c *cluster.Cluster, ns, name string) {
	t.Helper()
	if err := createNADIn(context.Background(), c, ns, name); err != nil {
		t.Fatal(err)
	}
}

func createNADIn(ctx context.Context, c *cluster.Cluster, ns, name string) error {
	return c.CreateNAD(ctx, ns, name)
}

// result of one `rdmabench run`.
type result struct {
	code           int
	stdout, stderr string
	dir            string
	rep            *schema.Report
}

// writeScenario writes a scenario file into the test's temp folder.
func writeScenario(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// trigger acts once when rdmabench's stderr so far satisfies when: after
// a pause, it calls do (default: SIGINT to rdmabench).
type trigger struct {
	when  func(stderr string) bool
	after time.Duration
	do    func()
}

// onText is a trigger for the first time text appears on stderr.
func onText(text string, after time.Duration, do func()) *trigger {
	return &trigger{when: func(s string) bool { return strings.Contains(s, text) }, after: after, do: do}
}

// run runs `rdmabench run` on the test cluster, bounded, with an optional
// trigger on its stderr.
func run(t *testing.T, c *cluster.Cluster, scenario string, bound time.Duration, trig *trigger, args ...string) result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results")
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	argv := append([]string{"run", scenario, "--kubeconfig", c.Kubeconfig, "--out", out, "--html", "none"}, args...)
	cmd := exec.CommandContext(ctx, rdmabench, argv...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	se := &watchWriter{trig: trig}
	cmd.Stderr = se
	if trig != nil && trig.do == nil {
		trig.do = func() {
			err := cmd.Process.Signal(syscall.SIGINT)
			t.Logf("SIGINT sent to rdmabench (pid %d): %v", cmd.Process.Pid, err)
		}
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("rdmabench run: %v", err)
	}
	r := result{code: code, stdout: stdout.String(), stderr: se.String(), dir: out}
	if data, err := os.ReadFile(filepath.Join(out, "report.json")); err == nil {
		r.rep = &schema.Report{}
		if err := json.Unmarshal(data, r.rep); err != nil {
			t.Fatalf("report.json: %v", err)
		}
	}
	t.Logf("rdmabench %s: exit %d\n--- stderr\n%s--- stdout\n%s", strings.Join(argv, " "), code, r.stderr, r.stdout)
	return r
}

// watchWriter keeps stderr and lets a test react to it. The buffer is a
// field, not embedded: an embedded bytes.Buffer's ReadFrom would let
// io.Copy bypass Write.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	trig *trigger
	sent bool
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.trig != nil && !w.sent && w.trig.when(w.buf.String()) {
		w.sent = true
		time.AfterFunc(w.trig.after, w.trig.do)
	}
	return n, err
}

// assertNothingLeft checks through the API that no object of any run is
// left (pods, ConfigMaps), and on the nodes that no pod process is.
func assertNothingLeft(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	assertNothingLeftWithin(t, c, 30*time.Second)
}

// assertNothingLeftWithin is assertNothingLeft with its own bound: after an
// apiserver restart the node agents' watches take a while to resume, so
// the processes of deleted pods end later than the objects.
func assertNothingLeftWithin(t *testing.T, c *cluster.Cluster, bound time.Duration) {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=rdmabench"}
	deadline := time.Now().Add(bound)
	for {
		pods, err1 := c.Client().CoreV1().Pods("").List(ctx, sel)
		cms, err2 := c.Client().CoreV1().ConfigMaps("").List(ctx, sel)
		nps, err3 := c.Client().NetworkingV1().NetworkPolicies("").List(ctx, sel)
		procs := c.Processes()
		if err1 == nil && err2 == nil && err3 == nil && len(pods.Items)+len(cms.Items)+len(nps.Items)+len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var left []string
			if pods != nil {
				for _, p := range pods.Items {
					left = append(left, "pod "+p.Namespace+"/"+p.Name)
				}
			}
			if cms != nil {
				for _, m := range cms.Items {
					left = append(left, "configmap "+m.Namespace+"/"+m.Name)
				}
			}
			if nps != nil {
				for _, n := range nps.Items {
					left = append(left, "networkpolicy "+n.Namespace+"/"+n.Name)
				}
			}
			for _, p := range procs {
				left = append(left, fmt.Sprintf("process %d %q in pod %s/%s on %s", p.PID, p.Cmdline, p.Namespace, p.Pod, p.Node))
			}
			t.Fatalf("left after the run (%v %v %v): %s", err1, err2, err3, strings.Join(left, "; "))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// runCmd runs another rdmabench command, bounded.
func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, rdmabench, args...).CombinedOutput()
	return string(out), err
}
