package agent

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// ipTimeout bounds every `ip` command the agent runs.
const ipTimeout = 10 * time.Second

// Fabric is the lane's pod network: two Linux bridges on the host, one for
// the primary (pod) network and one that stands for the Multus secondary
// network, and the address pools of both. The bridges carry no host
// address, so pod addresses exist only inside the pods' namespaces.
type Fabric struct {
	// Prefix starts every netns, veth and bridge name, so leftovers are
	// recognisable and two clusters on one host do not collide.
	Prefix string
	// Primary and Secondary are the bridges' names.
	Primary, Secondary string
	// PrimaryNet and SecondaryNet are the pools (e.g. 10.244.0.0/16).
	PrimaryNet, SecondaryNet *net.IPNet
	// SRIOVNetworks are the secondary networks ("namespace/name") whose
	// attachments report a device in network-status, as the SR-IOV CNI
	// does: a PCI function and its RDMA device (DeviceInfo).
	SRIOVNetworks []string

	mu   sync.Mutex
	next int // addresses handed out; the n-th is .0.2 + n
	seq  int // namespace sequence number
}

// NewFabric creates the two bridges. prefix must be at most 6 characters
// (interface names are limited to 15).
func NewFabric(ctx context.Context, prefix string, primary, secondary string) (*Fabric, error) {
	_, pn, err := net.ParseCIDR(primary)
	if err != nil {
		return nil, err
	}
	_, sn, err := net.ParseCIDR(secondary)
	if err != nil {
		return nil, err
	}
	f := &Fabric{Prefix: prefix, Primary: prefix + "-br0", Secondary: prefix + "-br1", PrimaryNet: pn, SecondaryNet: sn}
	for _, br := range []string{f.Primary, f.Secondary} {
		if err := ipCmd(ctx, "link", "add", br, "type", "bridge"); err != nil {
			f.Close(context.Background())
			return nil, err
		}
		if err := ipCmd(ctx, "link", "set", br, "up"); err != nil {
			f.Close(context.Background())
			return nil, err
		}
	}
	return f, nil
}

// Close removes the bridges (the veths on them go with their namespaces).
func (f *Fabric) Close(ctx context.Context) error {
	var errs []string
	for _, br := range []string{f.Primary, f.Secondary} {
		if linkExists(br) {
			if err := ipCmd(ctx, "link", "del", br); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("remove bridges: %s", strings.Join(errs, "; "))
	}
	return nil
}

// allocate returns a new namespace name and the next host number.
func (f *Fabric) allocate() (netns string, host int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	f.next++
	return fmt.Sprintf("%s-%d", f.Prefix, f.seq), f.next
}

// addr is the host-th address of n (.0.2, .0.3, ... skipping .x.0/.x.255
// is not needed for a /16 with at most 65000 pods).
func addr(n *net.IPNet, host int) net.IP {
	ip := n.IP.To4()
	v := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	v += uint32(host) + 1
	return net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).To4()
}

// Attachment is one interface of a pod: what network-status reports.
type Attachment struct {
	Network   string // "cbr0" for the primary, "<ns>/<name>" for Multus ones
	Interface string
	IP        net.IP
	MAC       string
	Default   bool
	// DeviceInfo is the device the CNI reports for this attachment
	// (SRIOVNetworks), nil for the bridge's veths.
	DeviceInfo *DeviceInfo
}

// DeviceInfo is the network-status "device-info" of an attachment, in the
// Network Plumbing Working Group's Device Information format (v1.1.0),
// as the SR-IOV CNI writes it for a virtual function.
type DeviceInfo struct {
	Type    string         `json:"type"`
	Version string         `json:"version"`
	PCI     *PCIDeviceInfo `json:"pci,omitempty"`
}

// PCIDeviceInfo is a PCI device's part of DeviceInfo.
type PCIDeviceInfo struct {
	PCIAddress   string `json:"pci-address"`
	RDMADevice   string `json:"rdma-device,omitempty"`
	PFPCIAddress string `json:"pf-pci-address,omitempty"`
}

// sriovDevice is the virtual function the agent says it gave the n-th
// pod on an SR-IOV network (the node has no such device: the test's pods
// see no RDMA device, and rdmabench must say so).
func sriovDevice(n int) *DeviceInfo {
	return &DeviceInfo{Type: "pci", Version: "1.1.0", PCI: &PCIDeviceInfo{
		PCIAddress: fmt.Sprintf("0000:3b:%02x.%d", 2+n/8%0x1e, n%8), RDMADevice: fmt.Sprintf("mlx5_%d", 4+n%60),
		PFPCIAddress: "0000:3b:00.0"}}
}

// giveVFs reports the pod's virtual functions (sorted) as the devices of
// its SR-IOV attachments, in order, as Multus hands the SR-IOV CNI the
// device plugin's device ids; with none, the made-up one stays.
func (p *PodNet) giveVFs(vfs []*DeviceInfo) {
	i := 0
	for j := range p.Attachments {
		if a := &p.Attachments[j]; a.DeviceInfo != nil && i < len(vfs) {
			a.DeviceInfo = vfs[i]
			i++
		}
	}
}

// PodNet is a pod's network namespace and its interfaces.
type PodNet struct {
	NetNS       string
	Attachments []Attachment
	hostVeths   []string
}

// Setup creates a namespace with lo, eth0 on the primary bridge and one
// netN per secondary network name (each on the secondary bridge).
func (f *Fabric) Setup(ctx context.Context, secondaries []string) (*PodNet, error) {
	ns, host := f.allocate()
	p := &PodNet{NetNS: ns}
	if err := ipCmd(ctx, "netns", "add", ns); err != nil {
		// A cancelled ctx may kill ip after it made the namespace: remove
		// it either way (Teardown ignores one that does not exist).
		_ = f.Teardown(context.Background(), p)
		return nil, err
	}
	if err := ipCmd(ctx, "-n", ns, "link", "set", "lo", "up"); err != nil {
		_ = f.Teardown(context.Background(), p)
		return nil, err
	}
	base := fmt.Sprintf("%s%d", f.Prefix, host)
	nets := append([]string{"cbr0"}, secondaries...)
	for i, name := range nets {
		a := Attachment{Network: name, Interface: "eth0", IP: addr(f.PrimaryNet, host), MAC: randomMAC(), Default: true}
		br, ones := f.Primary, maskOnes(f.PrimaryNet)
		if i > 0 {
			a = Attachment{Network: name, Interface: fmt.Sprintf("net%d", i), IP: addr(f.SecondaryNet, host), MAC: randomMAC()}
			br, ones = f.Secondary, maskOnes(f.SecondaryNet)
			// Two attachments to the secondary bridge need distinct
			// addresses: later ones take addresses from the top half.
			if i > 1 {
				a.IP = addr(f.SecondaryNet, host+(i-1)*30000)
			}
			if slices.Contains(f.SRIOVNetworks, name) {
				a.DeviceInfo = sriovDevice(host)
			}
		}
		hv := fmt.Sprintf("%sh%d", base, i)
		steps := [][]string{
			{"link", "add", hv, "type", "veth", "peer", "name", a.Interface, "address", a.MAC, "netns", ns},
			{"link", "set", hv, "master", br, "up"},
			{"-n", ns, "addr", "add", fmt.Sprintf("%s/%d", a.IP, ones), "dev", a.Interface},
			{"-n", ns, "link", "set", a.Interface, "up"},
		}
		for j, s := range steps {
			if err := ipCmd(ctx, s...); err != nil {
				_ = f.Teardown(context.Background(), p)
				return nil, err
			}
			if j == 0 {
				p.hostVeths = append(p.hostVeths, hv)
			}
		}
		p.Attachments = append(p.Attachments, a)
	}
	return p, nil
}

// Teardown removes the namespace and the host ends of its veths. Callers
// kill the namespace's processes first (see KillNetNS).
func (f *Fabric) Teardown(ctx context.Context, p *PodNet) error {
	var errs []string
	for _, hv := range p.hostVeths {
		if linkExists(hv) {
			if err := ipCmd(ctx, "link", "del", hv); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if err := ipCmd(ctx, "netns", "del", p.NetNS); err != nil && !strings.Contains(err.Error(), "No such file") {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("tear down %s: %s", p.NetNS, strings.Join(errs, "; "))
	}
	return nil
}

func maskOnes(n *net.IPNet) int {
	ones, _ := n.Mask.Size()
	return ones
}

// randomMAC is a locally administered unicast address.
func randomMAC() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	b[0] = (b[0] | 0x02) & 0xfe
	return net.HardwareAddr(b).String()
}

func linkExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// ipCmd runs `ip ARGS...` with a bound and returns its output in the error.
func ipCmd(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, ipTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
