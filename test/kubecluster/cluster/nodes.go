package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// brokenImage says whether an image fails to pull in this cluster.
func (c *Cluster) brokenImage(image string) bool {
	return strings.Contains(image, "broken") || strings.Contains(image, "does-not-exist") ||
		slices.Contains(c.opts.BrokenImages, image)
}

func (c *Cluster) rootFS(image string) string {
	if c.opts.RootFS == nil || c.brokenImage(image) {
		return ""
	}
	return c.opts.RootFS(image)
}

// startNodes creates the two bridges and starts one agent per node, each
// with its kubelet API on its own loopback port.
func (c *Cluster) startNodes(ctx context.Context) error {
	f, err := agent.NewFabric(ctx, c.prefix(), c.opts.PrimaryCIDR, c.opts.SecondaryCIDR)
	if err != nil {
		return err
	}
	f.SRIOVNetworks = c.opts.SRIOVNetworks
	c.fabric = f
	var specs []nodeSpec
	for i := 1; i <= c.opts.Nodes; i++ {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("%s%d", c.opts.NodePrefix, i)})
	}
	for _, r := range c.opts.RemoteNodes {
		specs = append(specs, nodeSpec{name: r.Name, remote: &r.Remote, labels: r.Labels})
	}
	for _, n := range specs {
		if err := c.startAgent(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// nodeSpec is one node to start.
type nodeSpec struct {
	name   string
	remote *agent.Remote
	labels map[string]string
}

// startAgent starts one node's agent, its kubelet API on a loopback port
// of its own, and waits until the node is Ready.
func (c *Cluster) startAgent(ctx context.Context, n nodeSpec) error {
	cs, err := kubernetes.NewForConfig(c.restConfig("system:node-agent"))
	if err != nil {
		return err
	}
	tlsCfg, err := c.pki.serverTLS(n.name)
	if err != nil {
		return err
	}
	// A free port can be taken by another node started at the same time
	// between freePort and the agent's listen: try another one then.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		err = c.startAgentOn(ctx, n, cs, tlsCfg, port)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			return err
		}
	}
}

// startAgentOn starts n's agent with its kubelet API on port.
func (c *Cluster) startAgentOn(ctx context.Context, n nodeSpec, cs kubernetes.Interface, tlsCfg *tls.Config, port int) error {
	opts := agent.Options{
		Name: n.name, Client: cs, Fabric: c.fabric, TLS: tlsCfg, Port: port,
		Capacity:    c.opts.Capacity.DeepCopy(),
		WorkDir:     filepath.Join(c.WorkDir, "nodes", n.name),
		BrokenImage: c.brokenImage, RootFS: c.rootFS, ExtraBinDir: c.opts.ExtraBinDir, ExtraBin: c.opts.ExtraBin,
		BackoffBase: c.opts.BackoffBase, BackoffMax: c.opts.BackoffMax,
		Log: c.opts.Log, Labels: n.labels, Remote: n.remote,
	}
	if n.remote != nil {
		opts.RootFS = nil // the machine's own file system
	}
	a, err := agent.Start(ctx, opts, c.opts.StartTimeout)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.agents = append(c.agents, a)
	c.mu.Unlock()
	return nil
}

// AddNode starts one more local node, as a cluster autoscaler's new
// machine joins, and returns once it is Ready. Stop removes it with the
// rest; RemoveNode earlier.
func (c *Cluster) AddNode(ctx context.Context, name string, labels map[string]string) error {
	return c.startAgent(ctx, nodeSpec{name: name, labels: labels})
}

// RemoveNode stops a node's agent (its pods' processes and namespaces go
// with it) and deletes the Node object, as a scale-down does.
func (c *Cluster) RemoveNode(ctx context.Context, name string) error {
	c.mu.Lock()
	var a *agent.Agent
	for i, x := range c.agents {
		if x.Name() == name {
			a = x
			c.agents = slices.Delete(c.agents, i, i+1)
			break
		}
	}
	c.mu.Unlock()
	if a == nil {
		return fmt.Errorf("no node %s", name)
	}
	err := a.Stop(ctx)
	if derr := c.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); derr != nil && !apierrors.IsNotFound(derr) {
		err = errors.Join(err, derr)
	}
	return err
}

// StopNode stops a node's agent as a machine that dies does: its pods'
// processes and namespaces go, its kubelet API stops answering (execs and
// logs fail), but the Node and its pods stay in the API until the node
// controller or a person removes them. The test deletes the Node when it
// is done (DeleteNode).
func (c *Cluster) StopNode(ctx context.Context, name string) error {
	c.mu.Lock()
	var a *agent.Agent
	for i, x := range c.agents {
		if x.Name() == name {
			a = x
			c.agents = slices.Delete(c.agents, i, i+1)
			break
		}
	}
	c.mu.Unlock()
	if a == nil {
		return fmt.Errorf("no node %s", name)
	}
	return a.Stop(ctx)
}

// DeleteNode deletes a Node object (one StopNode stopped), as a person or
// a cloud controller removes a dead machine; the pod garbage collector
// then deletes the pods left bound to it.
func (c *Cluster) DeleteNode(ctx context.Context, name string) error {
	if err := c.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func netInterfaces() ([]string, error) {
	entries, err := os.ReadDir("/sys/class/net")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}
