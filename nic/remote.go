package nic

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ExecFunc runs a short command on a host and returns its stdout; the
// runner passes its backend's Exec, so discovery works over ssh or in a pod
// without rdmabench installed there.
type ExecFunc func(ctx context.Context, argv []string) ([]byte, error)

// DumpScript prints every sysfs file discovery reads as "path:line" (grep
// -H), from the host's root; unreadable files are skipped by grep -s. Of
// a port's GID table only the populated entries are printed, each with
// its type and netdev: the attributes of the others are never read (they
// fail), nor printed. A table has up to 1,024 entries (rxe; 255 on
// ConnectX) and a few populated, and under CPU emulation each sysfs read
// costs about 0.1 s: reading every entry's three files took ten minutes
// per soft-RoCE VM. It runs with busybox as well as GNU grep.
const DumpScript = `cd / && d=sys/class/infiniband/*; p=$d/ports/*; n=$d/device/net/*
grep -s -H '' $d/node_type $d/fw_ver $d/parent $d/device/uevent $d/device/physfn/uevent $d/device/numa_node \
 $d/device/current_link_speed $d/device/current_link_width $n/dev_port $n/dev_id \
 $p/state $p/phys_state $p/link_layer $p/rate sys/class/net/*/mtu
grep -s -H -v -x '` + zeroGID + `' $p/gids/* | while IFS= read -r l; do
 f=${l%%:*}; a=${f%/gids/*}/gid_attrs; i=${f##*/}
 echo "$l"; grep -s -H '' "$a/types/$i" "$a/ndevs/$i"
done
true`

// TopoScript prints `nvidia-smi topo -m` where nvidia-smi exists, bounded
// where timeout(1) exists (a wedged driver makes nvidia-smi wait).
const TopoScript = `if command -v nvidia-smi >/dev/null 2>&1; then
 if command -v timeout >/dev/null 2>&1; then timeout 8 nvidia-smi topo -m; else nvidia-smi topo -m; fi; fi; true`

// DiscoverRemote discovers the NICs of another host: it reads the host's
// sysfs through exec, rebuilds the files under a temporary root and runs
// the same discovery as on the local host.
func DiscoverRemote(ctx context.Context, exec ExecFunc) (*Inventory, error) {
	dump, err := exec(ctx, []string{"sh", "-c", DumpScript})
	if err != nil {
		return nil, fmt.Errorf("reading sysfs: %w", err)
	}
	topo, err := exec(ctx, []string{"sh", "-c", TopoScript})
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi topo -m: %w", err)
	}
	return DiscoverDump(dump, topo)
}

// DiscoverDump is discovery over what DumpScript and TopoScript printed on
// another host, for a caller that ran them inside a script of its own
// (preflight reads everything in one exec: under emulation, or through the
// API at scale, each exec costs more than the reading).
func DiscoverDump(dump, topo []byte) (*Inventory, error) {
	dir, err := os.MkdirTemp("", "rdmabench-sysfs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := Unpack(string(dump), dir); err != nil {
		return nil, err
	}
	if len(topo) > 0 {
		if err := os.WriteFile(filepath.Join(dir, TopoFile), topo, 0o644); err != nil {
			return nil, err
		}
	}
	inv, err := Discover(Options{Root: dir})
	if inv != nil {
		inv.Root = "/"
	}
	return inv, err
}

// Unpack turns a "path:line" dump (grep -H output) into files under dir.
// Only relative paths under sys/ are accepted: a dump cannot write
// anywhere else.
func Unpack(dump, dir string) error {
	files := map[string]*strings.Builder{}
	var order []string
	sc := bufio.NewScanner(strings.NewReader(dump))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		path, line, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		clean := filepath.Clean(path)
		if path != clean || !strings.HasPrefix(clean, "sys/") || strings.Contains(clean, "..") {
			return fmt.Errorf("sysfs dump: unexpected path %q (want a relative path under sys/)", path)
		}
		b := files[clean]
		if b == nil {
			b = &strings.Builder{}
			files[clean] = b
			order = append(order, clean)
		}
		b.WriteString(line + "\n")
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("sysfs dump: %w", err)
	}
	for _, p := range order {
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, []byte(files[p].String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
