package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// SRIOVResource is the extended resource whose units the agent hands out
// as the SR-IOV device plugin hands out virtual functions: each unit is
// one VF, given to ONE container (the one that requests it, never shared
// with another container or pod), with its device-info file written where
// the Network Plumbing WG's device-info spec puts a device plugin's
// (<DevInfoDir>/<resource with '/' as '-'>-<PCI address>-device.json,
// 0444) and PCIDEVICE_<RESOURCE> in the container's environment; the
// SR-IOV networks' network-status then reports the pod's VF, as Multus
// passes the device plugin's device id to the SR-IOV CNI.
const SRIOVResource corev1.ResourceName = "rdma/roce_gdr"

// vfPool is a node's virtual functions of SRIOVResource.
type vfPool struct {
	mu    sync.Mutex
	dir   string         // the device-info folder ("dp")
	taken map[int]string // VF index → the pod UID/container holding it
	n     int
}

func newVFPool(dir string, n int) *vfPool {
	return &vfPool{dir: dir, taken: map[int]string{}, n: n}
}

// vfInfo is VF i's device-info (type pci, spec 1.1.0).
func vfInfo(i int) *DeviceInfo {
	return &DeviceInfo{Type: "pci", Version: "1.1.0", PCI: &PCIDeviceInfo{
		PCIAddress: fmt.Sprintf("0000:3b:%02x.%d", 2+i/8, i%8), RDMADevice: fmt.Sprintf("mlx5_%d", 2+i), PFPCIAddress: "0000:3b:00.0"}}
}

// devInfoPath is where the device plugin's device-info of a device goes.
func (v *vfPool) devInfoPath(deviceID string) string {
	return filepath.Join(v.dir, strings.ReplaceAll(string(SRIOVResource), "/", "-")+"-"+strings.ReplaceAll(deviceID, "/", "-")+"-device.json")
}

// allocate gives each container of the pod that requests SRIOVResource
// its own VFs (init containers too, as a kubelet's device manager does),
// sets PCIDEVICE_RDMA_ROCE_GDR in it and writes their device-info files.
// It returns every VF of the pod, sorted by PCI address (Multus' order).
func (v *vfPool) allocate(p *pod) ([]*DeviceInfo, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var all []*DeviceInfo
	for _, c := range append(append([]*container{}, p.inits...), p.containers...) {
		q, ok := c.spec.Resources.Limits[SRIOVResource]
		if !ok {
			continue
		}
		var ids []string
		for range q.Value() {
			i := v.free()
			if i < 0 {
				return nil, fmt.Errorf("%s: no free virtual function on this node (%d in use)", SRIOVResource, v.n)
			}
			v.taken[i] = string(p.spec.UID) + "/" + c.spec.Name
			info := vfInfo(i)
			b, _ := json.Marshal(info)
			if err := os.MkdirAll(v.dir, 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(v.devInfoPath(info.PCI.PCIAddress), b, 0o444); err != nil {
				return nil, err
			}
			ids = append(ids, info.PCI.PCIAddress)
			all = append(all, info)
		}
		c.spec.Env = append(c.spec.Env, corev1.EnvVar{Name: pciDeviceEnv(SRIOVResource), Value: strings.Join(ids, ",")})
	}
	slices.SortFunc(all, func(a, b *DeviceInfo) int { return strings.Compare(a.PCI.PCIAddress, b.PCI.PCIAddress) })
	return all, nil
}

func (v *vfPool) free() int {
	for i := range v.n {
		if _, ok := v.taken[i]; !ok {
			return i
		}
	}
	return -1
}

// release frees the pod's VFs and removes their device-info files.
func (v *vfPool) release(uid string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, holder := range v.taken {
		if strings.HasPrefix(holder, uid+"/") {
			delete(v.taken, i)
			_ = os.Remove(v.devInfoPath(vfInfo(i).PCI.PCIAddress))
		}
	}
}

// pciDeviceEnv is the variable the SR-IOV device plugin sets for a
// resource: PCIDEVICE_ and its name upper-cased, '/', '.' and '-' as '_'.
func pciDeviceEnv(r corev1.ResourceName) string {
	return "PCIDEVICE_" + strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(strings.ToUpper(string(r)))
}
