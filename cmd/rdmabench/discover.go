package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/units"
)

type discoverOptions struct {
	output string
	root   string
	record string
	noGPU  bool
}

func newDiscoverCmd(stdout io.Writer) *cobra.Command {
	o := &discoverOptions{}
	cmd := &cobra.Command{
		Use: "discover",
		Example: `  rdmabench discover
  rdmabench discover -o json --no-gpu`,
		Short: "List this host's RDMA NICs: ports, rate, PCIe ceiling, netdev, RoCE v2 GID, GPU affinity",
		Long: `discover reads sysfs (and nvidia-smi topo -m when present) and prints every RDMA
device and port: state, link layer, netdev (as ibdev2netdev shows), rate, the PCIe
link behind it and the resulting ceiling, the RoCE v2 IPv4 GID index, MTU, NUMA
node, and which NICs are nearest to each GPU. lineRate: auto reads the same.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runDiscover(o, stdout) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: table or json")
	f.StringVar(&o.root, "root", "/", "directory sysfs is read under (a recorded tree)")
	f.StringVar(&o.record, "record", "", "also copy every file read into this directory (a tree for tests and bug reports)")
	f.BoolVar(&o.noGPU, "no-gpu", false, "skip nvidia-smi topo -m")
	return cmd
}

func runDiscover(o *discoverOptions, stdout io.Writer) error {
	if o.output != "table" && o.output != "json" {
		return usageError{fmt.Errorf("--output %q: want table or json", o.output)}
	}
	if fi, err := os.Stat(o.root); err != nil || !fi.IsDir() {
		return usageError{fmt.Errorf("--root %q: not a directory (want / or a tree recorded with --record)", o.root)}
	}
	inv, err := nic.Discover(nic.Options{Root: o.root, Record: o.record, NoGPU: o.noGPU})
	if err != nil {
		return err
	}
	if o.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(inv)
	}
	return writeInventory(stdout, inv)
}

func writeInventory(w io.Writer, inv *nic.Inventory) error {
	if len(inv.Devices) == 0 {
		_, err := fmt.Fprintf(w, "no RDMA devices (nothing under %s)\n", filepath.Join(inv.Root, "sys/class/infiniband"))
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tPORT\tSTATE\tLINK\tNETDEV\tRATE\tPCIE\tCEILING\tROCEV2 GID\tMTU\tNUMA")
	for _, d := range inv.Devices {
		for _, p := range d.Ports {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, p.Port, p.State, p.LinkLayer,
				orDash(p.Netdev), orDash(p.Rate), pcieText(d), bpsText(p.CeilingBps), gidText(p.RoCEv2GIDIndex), orDash(mtuText(p.ActiveMTU)), numaText(d.NUMANode))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range inv.GPUs {
		if _, err := fmt.Fprintf(w, "%s nearest NIC: %s (%s)\n", g.Name, orDash(strings.Join(g.Nearest, ", ")), orDash(g.Relation)); err != nil {
			return err
		}
	}
	return nil
}

func pcieText(d nic.Device) string {
	if d.PCIeBps == 0 {
		return "-"
	}
	return fmt.Sprintf("%s x%d (%s)", strings.TrimSuffix(d.PCIeSpeed, " PCIe"), d.PCIeWidth, bpsText(d.PCIeBps))
}

func bpsText(bps float64) string {
	if bps <= 0 {
		return "-"
	}
	return units.FormatRate(bps)
}

func gidText(i *int) string {
	if i == nil {
		return "-"
	}
	return strconv.Itoa(*i)
}

func mtuText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func numaText(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
