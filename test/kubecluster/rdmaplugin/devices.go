package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/nic"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// rdmaDevice is what a pod gets when it is given the resource: the RDMA
// device bound to the node's data netdev and the character devices a
// verbs program opens for it.
type rdmaDevice struct {
	Name   string // rxe0
	Netdev string // eth0
	Active bool   // its port is ACTIVE
	// Files are /dev/infiniband/uverbsN of the device, rdma_cm (RDMA CM:
	// rping, perftest -R, UCX's rdmacm) and umadN where ib_umad is loaded.
	Files []string
}

// findDevice reads sysfs under root (the live node: "/") and devDir
// (/dev) for the RDMA device whose port carries netdev. The shared-device
// plugin's rule is the same (its ifNames selector), but it reaches RDMA
// devices only through their PCI function's sysfs folder, which a soft
// device (rxe, siw) has not: this is the reason this plugin exists.
func findDevice(root, devDir, netdev string) (rdmaDevice, error) {
	inv, err := nic.Discover(nic.Options{Root: root, NoGPU: true})
	if err != nil {
		return rdmaDevice{}, err
	}
	var seen []string
	for _, d := range inv.Devices {
		for _, p := range d.Ports {
			seen = append(seen, fmt.Sprintf("%s port %d on %q", d.Name, p.Port, p.Netdev))
			if p.Netdev != netdev {
				continue
			}
			files, err := charDevices(root, devDir, d.Name)
			if err != nil {
				return rdmaDevice{}, err
			}
			return rdmaDevice{Name: d.Name, Netdev: netdev, Active: p.State == "ACTIVE", Files: files}, nil
		}
	}
	if len(seen) == 0 {
		return rdmaDevice{}, fmt.Errorf("no RDMA device under %s (load rdma_rxe and run `rdma link add rxe0 type rxe netdev %s`)",
			filepath.Join(root, "sys/class/infiniband"), netdev)
	}
	return rdmaDevice{}, fmt.Errorf("no RDMA device on netdev %q; found %s", netdev, strings.Join(seen, ", "))
}

// charDevices lists the device files of ibdev: its uverbs and umad nodes
// (each class folder's ibdev names its device) and rdma_cm, which serves
// every device. uverbs is required; the others are given when present.
func charDevices(root, devDir, ibdev string) ([]string, error) {
	var files []string
	for _, class := range []string{"infiniband_verbs", "infiniband_mad"} {
		dirs, _ := filepath.Glob(filepath.Join(root, "sys/class", class, "*"))
		for _, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, "ibdev"))
			if err != nil || strings.TrimSpace(string(b)) != ibdev {
				continue
			}
			files = append(files, filepath.Join(devDir, "infiniband", filepath.Base(d)))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no uverbs device under %s (load ib_uverbs)", ibdev, filepath.Join(root, "sys/class/infiniband_verbs"))
	}
	cm := filepath.Join(devDir, "infiniband", "rdma_cm")
	if _, err := os.Stat(cm); err == nil {
		files = append(files, cm)
	}
	sort.Strings(files)
	return files, nil
}

// specs are the device files as the kubelet hands them to the runtime:
// the same path inside the container, read-write (the cgroup's device
// rule opens them to the container).
func (d rdmaDevice) specs() []*pluginapi.DeviceSpec {
	var out []*pluginapi.DeviceSpec
	for _, f := range d.Files {
		out = append(out, &pluginapi.DeviceSpec{HostPath: f, ContainerPath: f, Permissions: "rw"})
	}
	return out
}
