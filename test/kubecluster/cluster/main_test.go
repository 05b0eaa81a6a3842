package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// One cluster per test binary, shared by every test (start-up is the
// expensive part); skipReason is set when this machine cannot run it.
var (
	testCluster *Cluster
	skipReason  string
	toolsRoot   string // the unpacked tools image; "" without make image
)

// ToolsImage is the image name the tests give pods that run in the tools
// image.
const ToolsImage = "rdmabench/tools:test"

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if err := Available(); err != nil {
		skipReason = err.Error()
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	// Pods whose image is ToolsImage run in the unpacked tools image (make
	// image); the others on the host's file system, as before.
	if root, err := ToolsRootFS(); err == nil {
		toolsRoot = root
	} else {
		fmt.Fprintf(os.Stderr, "kubecluster: image tests skipped: %v\n", err)
	}
	extra, err := os.MkdirTemp("", "kubecluster-extra-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(extra)
	if err := os.WriteFile(extra+"/hello-extra", []byte("#!/bin/sh\necho extra-bin\n"), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var log bytes.Buffer
	c, err := Start(ctx, Options{Nodes: 3, Log: &log, BackoffBase: 500 * time.Millisecond, BackoffMax: 4 * time.Second,
		ExtraBinDir: extra, RootFS: func(image string) string {
			if image == ToolsImage {
				return toolsRoot
			}
			return ""
		}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start test cluster: %v\n%s", err, log.String())
		return 1
	}
	testCluster = c
	code := m.Run()
	// Every test deleted its pods: nothing of them may remain (checked
	// before Stop, which would remove it anyway).
	if code == 0 {
		// Pods gone from the API are reaped asynchronously: wait (bounded).
		var left []string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if left = c.Leftovers(); len(left) == 0 {
				break
			}
		}
		if len(left) > 0 {
			fmt.Fprintf(os.Stderr, "left after every pod was deleted: %v\n", left)
			code = 1
		}
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop test cluster: %v\n", err)
		return 1
	}
	return code
}

// needCluster skips the test when the machine cannot run the cluster.
func needCluster(t testing.TB) *Cluster {
	t.Helper()
	if testCluster == nil {
		t.Skip("kube test cluster unavailable: " + skipReason)
	}
	return testCluster
}

// testPod is a pod that runs argv (sleep by default) on the host's file
// system; mutate adjusts it.
func testPod(name string, argv []string, mutate func(*corev1.Pod)) *corev1.Pod {
	zero := int64(1)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"test": "kubecluster"}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &zero,
			Containers:                    []corev1.Container{{Name: "main", Image: "debian:stable", Command: argv}},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

// createPod creates the pod and deletes it (waiting until it is gone) at
// the end of the test.
func createPod(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	return createPodOn(t, needCluster(t), p)
}

// createPodOn is createPod on cluster c.
func createPodOn(t *testing.T, c *Cluster, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := c.Client().CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePodOn(t, c, p.Namespace, p.Name) })
	return out
}

// deletePod deletes a pod and waits (bounded) until the API no longer has it.
func deletePod(t testing.TB, ns, name string) {
	deletePodOn(t, needCluster(t), ns, name)
}

// deletePodOn is deletePod on cluster c.
func deletePodOn(t testing.TB, c *Cluster, ns, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := c.Client().CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete pod %s: %v", name, err)
		return
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("pod %s still in the API after 60s", name)
	}
}

// waitPod polls the pod until cond holds (bounded by d) and returns it.
func waitPod(t *testing.T, name string, d time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	return waitPodOn(t, needCluster(t), name, d, what, cond)
}

// waitPodOn is waitPod on cluster c.
func waitPodOn(t *testing.T, c *Cluster, name string, d time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var last *corev1.Pod
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client().CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s: not %s within %s; last status: %+v", name, what, d, last.Status)
	}
	return last
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// execIn runs argv in the pod through the apiserver with the given
// protocol ("websocket" or "spdy") and returns stdout, stderr and the error.
func execIn(t *testing.T, pod, protocol string, stdin string, argv ...string) (string, string, error) {
	t.Helper()
	return execOn(t, needCluster(t), pod, protocol, stdin, argv...)
}

// execOn is execIn on cluster c.
func execOn(t *testing.T, c *Cluster, pod, protocol string, stdin string, argv ...string) (string, string, error) {
	t.Helper()
	req := c.Client().CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name(pod).
		SubResource("exec").VersionedParams(&corev1.PodExecOptions{
		Container: "main", Command: argv, Stdin: stdin != "", Stdout: true, Stderr: true,
	}, scheme.ParameterCodec)
	var ex remotecommand.Executor
	var err error
	if protocol == "spdy" {
		ex, err = remotecommand.NewSPDYExecutor(c.RESTConfig(), "POST", req.URL())
	} else {
		ex, err = remotecommand.NewWebSocketExecutor(c.RESTConfig(), "GET", req.URL().String())
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: &out, Stderr: &errb}
	if stdin != "" {
		opts.Stdin = strings.NewReader(stdin)
	}
	err = ex.StreamWithContext(ctx, opts)
	return out.String(), errb.String(), err
}
