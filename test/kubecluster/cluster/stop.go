package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Available says whether this machine can run the cluster: root, and the
// `ip` command with network namespaces. Tests skip with its message.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("the kube test cluster needs root (network namespaces, veths, bridges)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "ip", "netns", "list").CombinedOutput(); err != nil {
		return fmt.Errorf("`ip netns` is unavailable (install iproute2): %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Stop removes everything the cluster started, in reverse order: the
// node agents (each pod's processes, namespace and veths), the bridges,
// the control-plane processes (by pid) and etcd; then the work folder if
// Start made it. Every wait is bounded; it is safe to call twice.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, a := range c.agentList() {
		if err := a.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if c.fabric != nil {
		if err := c.fabric.Close(ctx); err != nil {
			errs = append(errs, err)
		} else {
			c.fabric = nil
		}
	}
	for _, p := range []*process{c.ctrlmgr, c.scheduler, c.apiserver} {
		if p != nil {
			if err := p.stop(apiserverGrace); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.egress != nil {
		if err := c.egress.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.etcd != nil {
		if err := c.etcd.Close(); err != nil {
			errs = append(errs, fmt.Errorf("etcd: %w", err))
		}
	}
	if left := c.Leftovers(); len(left) > 0 {
		errs = append(errs, fmt.Errorf("left on the host: %s", strings.Join(left, ", ")))
	}
	if len(errs) == 0 {
		c.release()
	}
	if c.ownsDir && len(errs) == 0 {
		_ = os.RemoveAll(c.WorkDir)
	}
	return errors.Join(errs...)
}

// Leftovers lists what of this cluster still exists on the host: network
// namespaces, links (veths; the bridges too once Stop has run) and pod
// processes. Empty while the cluster runs with no pods, and after Stop.
func (c *Cluster) Leftovers() []string {
	var out []string
	for _, ns := range c.NetNSes() {
		out = append(out, "netns "+ns)
	}
	ifaces, _ := netInterfaces()
	for _, name := range ifaces {
		bridge := c.fabric != nil && (name == c.fabric.Primary || name == c.fabric.Secondary)
		if strings.HasPrefix(name, c.prefix()) && !bridge {
			out = append(out, "link "+name)
		}
	}
	for _, p := range c.Processes() {
		out = append(out, fmt.Sprintf("process %d (%s) in %s/%s", p.PID, p.Cmdline, p.Namespace, p.Pod))
	}
	return out
}
