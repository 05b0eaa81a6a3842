package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
)

// TestRemoteNode: a node whose pods run through a shell command (the
// soft-RoCE lane puts ssh to a VM there; here it is sh -c on this host, the
// same code path). hostNetwork pods run with the machine's address and the
// pod marker, exec reaches them, a pod with a network of its own is
// refused with the reason, and deleting a pod ends every process it
// started on the machine, found by the marker.
func TestRemoteNode(t *testing.T) {
	needCluster(t) // this machine can run a cluster
	shell := []string{"sh", "-c"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := Start(ctx, Options{
		PrimaryCIDR: "10.246.0.0/16", SecondaryCIDR: "10.247.0.0/16", // beside the shared cluster's
		RemoteNodes: []RemoteNode{{Name: "machine-1", Remote: agent.Remote{Shell: shell, HostIP: "127.0.0.2"}}},
	})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() }) // after the pods' own clean-ups (LIFO)
	if got := strings.Join(c.NodeNames(), ","); got != "machine-1" {
		t.Fatalf("nodes %s; want machine-1 only", got)
	}

	p := createPodOn(t, c, testPod("remote", sleeper, func(p *corev1.Pod) { p.Spec.HostNetwork = true }))
	ready := waitPodOn(t, c, "remote", 30*time.Second, "Ready", isReady)
	if ready.Status.PodIP != "127.0.0.2" || ready.Status.HostIP != "127.0.0.2" {
		t.Errorf("pod IP %s host IP %s; want the machine's 127.0.0.2", ready.Status.PodIP, ready.Status.HostIP)
	}
	out, _, err := execOn(t, c, "remote", "websocket", "", "sh", "-c", `echo "$`+agent.PodMarker+`"; setsid sleep 300 >/dev/null 2>&1 </dev/null & echo started`)
	if err != nil || out != string(p.UID)+"\nstarted\n" {
		t.Fatalf("exec: %v %q; want the pod's UID as marker, then started", err, out)
	}
	mine := func() []string {
		lctx, lcancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer lcancel()
		procs, err := agent.RemoteProcesses(lctx, shell)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, pr := range procs {
			if pr.PodUID == string(p.UID) {
				out = append(out, pr.Cmdline)
			}
		}
		return out
	}
	// The sleep left the exec's process group (setsid, as a daemon does):
	// only the marker finds it.
	if procs := mine(); len(procs) < 2 {
		t.Fatalf("pod processes on the machine: %q; want the container and the exec'd sleep", procs)
	}

	createPodOn(t, c, testPod("own-network", sleeper, nil))
	refused := waitPodOn(t, c, "own-network", 30*time.Second, "refused", func(p *corev1.Pod) bool { return p.Status.Reason == "NetworkNotReady" })
	if !strings.Contains(refused.Status.Message, "runs hostNetwork pods only") {
		t.Errorf("message %q; want the reason", refused.Status.Message)
	}

	deletePodOn(t, c, "default", "remote")
	deadline := time.Now().Add(30 * time.Second)
	for procs := mine(); len(procs) > 0; procs = mine() {
		if time.Now().After(deadline) {
			t.Fatalf("left on the machine 30 s after the delete: %q", procs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
