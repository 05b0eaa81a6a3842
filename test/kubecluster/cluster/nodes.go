package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/test/kubecluster/agent"
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
	c.fabric = f
	cs, err := kubernetes.NewForConfig(c.restConfig("system:node-agent"))
	if err != nil {
		return err
	}
	type nodeSpec struct {
		name   string
		remote *agent.Remote
		labels map[string]string
	}
	var specs []nodeSpec
	for i := 1; i <= c.opts.Nodes; i++ {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("%s%d", c.opts.NodePrefix, i)})
	}
	for _, r := range c.opts.RemoteNodes {
		specs = append(specs, nodeSpec{name: r.Name, remote: &r.Remote, labels: r.Labels})
	}
	for _, n := range specs {
		port, err := freePort()
		if err != nil {
			return err
		}
		tlsCfg, err := c.pki.serverTLS(n.name)
		if err != nil {
			return err
		}
		opts := agent.Options{
			Name: n.name, Client: cs, Fabric: f, TLS: tlsCfg, Port: port,
			Capacity:    c.opts.Capacity.DeepCopy(),
			WorkDir:     filepath.Join(c.WorkDir, "nodes", n.name),
			BrokenImage: c.brokenImage, RootFS: c.rootFS, ExtraBinDir: c.opts.ExtraBinDir,
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
		c.agents = append(c.agents, a)
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
