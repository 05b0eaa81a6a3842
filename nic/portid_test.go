package nic

import "testing"

// TestPortIDOfVFs: two VFs of one PF and the PF itself name one port
// (they share its line rate), a software device its name.
func TestPortIDOfVFs(t *testing.T) {
	dump := `sys/class/infiniband/mlx5_5/node_type:1: CA
sys/class/infiniband/mlx5_5/device/uevent:PCI_SLOT_NAME=0000:3b:00.2
sys/class/infiniband/mlx5_5/device/physfn/uevent:PCI_SLOT_NAME=0000:3b:00.0
sys/class/infiniband/mlx5_5/ports/1/state:4: ACTIVE
sys/class/infiniband/mlx5_6/node_type:1: CA
sys/class/infiniband/mlx5_6/device/uevent:PCI_SLOT_NAME=0000:3b:00.3
sys/class/infiniband/mlx5_6/device/physfn/uevent:PCI_SLOT_NAME=0000:3b:00.0
sys/class/infiniband/mlx5_6/ports/1/state:4: ACTIVE
sys/class/infiniband/mlx5_0/node_type:1: CA
sys/class/infiniband/mlx5_0/device/uevent:PCI_SLOT_NAME=0000:3b:00.0
sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE
sys/class/infiniband/rxe0/node_type:1: CA
sys/class/infiniband/rxe0/parent:eth0
sys/class/infiniband/rxe0/ports/1/state:4: ACTIVE
`
	inv, err := DiscoverDump([]byte(dump), nil)
	if err != nil {
		t.Fatal(err)
	}
	for dev, want := range map[string]string{
		"mlx5_5": "PCI 0000:3b:00.0 port 1", "mlx5_6": "PCI 0000:3b:00.0 port 1",
		"mlx5_0": "PCI 0000:3b:00.0 port 1", "rxe0": "rxe0 port 1", "mlx5_9": "",
	} {
		if got := inv.PortID(dev, 1); got != want {
			t.Errorf("%s: %q, want %q", dev, got, want)
		}
	}
	var none *Inventory
	if none.PortID("mlx5_0", 1) != "" {
		t.Error("a nil inventory names no port")
	}
}
