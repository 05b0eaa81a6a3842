// Command rdmaplugin is the soft-RoCE lane's RDMA device plugin: it runs on
// each VM node beside the kubelet and advertises the RDMA device of one
// netdev (rxe0 on eth0) as an extended resource (rdma/rxe) that pods
// share, giving each pod that asks for it the device's files
// (/dev/infiniband/uverbsN, rdma_cm) through the kubelet's device-plugin
// API (v1beta1), as the RDMA shared-device plugin does for a NIC.
//
// Why not that plugin (github.com/Mellanox/k8s-rdma-shared-dev-plugin,
// built and run in the VM): it finds RDMA devices only under their PCI
// function's sysfs folder (/sys/bus/pci/devices/ADDR/infiniband), and rxe
// lives under /sys/devices/virtual/infiniband, so it advertises 0 units.
//
//	rdmaplugin --netdev eth0 --resource rdma/rxe --shares 2
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

type options struct {
	netdev, resource, sysRoot, devDir, pluginDir string
	shares                                       int
}

func run(args []string, stderr io.Writer) int {
	log.SetOutput(stderr)
	var o options
	fs := flag.NewFlagSet("rdmaplugin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.netdev, "netdev", "eth0", "the netdev whose RDMA device is advertised")
	fs.StringVar(&o.resource, "resource", "rdma/rxe", "the extended resource's name (domain/name)")
	fs.IntVar(&o.shares, "shares", 2, "how many pods may hold the device at once")
	fs.StringVar(&o.sysRoot, "sys-root", "/", "where sysfs is mounted under (tests)")
	fs.StringVar(&o.devDir, "dev", "/dev", "the device folder")
	fs.StringVar(&o.pluginDir, "plugin-dir", pluginapi.DevicePluginPath, "the kubelet's device-plugin folder")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := o.check(); err != nil {
		fmt.Fprintln(stderr, "rdmaplugin:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	p := newPlugin(o.resource, o.shares, func() (rdmaDevice, error) { return findDevice(o.sysRoot, o.devDir, o.netdev) })
	if p.err != nil {
		log.Printf("%s: no device yet: %v", o.resource, p.err)
	} else {
		log.Printf("%s: %s on %s, port active %v, files %v, %d shares", o.resource, p.dev.Name, o.netdev, p.dev.Active, p.dev.Files, o.shares)
	}
	go p.watch(ctx, 2*time.Second)
	sock := strings.ReplaceAll(o.resource, "/", "_") + ".sock"
	for ctx.Err() == nil {
		err := serveOnce(ctx, p, o.pluginDir, sock)
		switch {
		case err == nil:
		case errors.Is(err, errKubeletRestarted):
			log.Printf("%v: registering again", err)
		default:
			log.Printf("%v (retrying in 2 s)", err)
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}
	return 0
}

func (o options) check() error {
	if o.shares < 1 {
		return fmt.Errorf("--shares %d: give at least 1", o.shares)
	}
	if i := strings.IndexByte(o.resource, '/'); i <= 0 || i == len(o.resource)-1 {
		return fmt.Errorf("--resource %q: want domain/name, e.g. rdma/rxe", o.resource)
	}
	return nil
}
