package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
)

// bench is one nixlbench process: register, start barrier, metadata
// exchange, then per (block, batch): descriptors, warm-up, timed, row.
type bench struct {
	f  flags
	rt rtIface
	tg *target
	in *initiator

	mu      sync.Mutex
	aborted bool
}

const world = 2

func (b *bench) main() int {
	f := b.f
	var rt rtIface
	if f.str("runtime_type") == "ASIO" {
		a, err := newAsioRT(f.str("asio_address"), f.num("asio_port"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			fmt.Fprintln(os.Stderr, "Failed to setup ASIO runtime")
			return 1
		}
		rt = a
	} else {
		fmt.Printf("Connecting to ETCD at %s\n", f.str("etcd_endpoints"))
		e, err := newEtcdRT(f.str("etcd_endpoints"), f.str("benchmark_group"), world)
		if err == nil {
			err = e.setup()
		}
		if err != nil {
			if !strings.Contains(err.Error(), "rank overflow") {
				fmt.Fprintln(os.Stderr, err)
			}
			fmt.Fprintln(os.Stderr, "Failed to setup ETCD runtime")
			return 1
		}
		fmt.Printf("ETCD Runtime: Registered as rank %d item %d of %d\n", e.rank, e.rank+1, world)
		rt = e
	}
	b.rt = rt
	defer rt.cleanup()
	host, _ := os.Hostname()
	if f.str("backend") == "LIBFABRIC" {
		// nixl_worker.cpp scopes the Neuron runtime before libfabric
		// (neuronCoreCount, which warns on stderr in SG mode) and names
		// the core count, -1 without Neuron, and its progress threads.
		if f.str("mode") == "SG" && os.Getenv("NEURON_RT_NUM_CORES") == "" && os.Getenv("NEURON_RT_VISIBLE_CORES") == "" {
			fmt.Fprintln(os.Stderr, "nixlbench: SG mode — set NEURON_RT_NUM_CORES=1")
		}
		fmt.Printf("Init nixl worker, dev all rank %d, type %s, hostname %s, nc_count -1, post threads %d\n", rt.getRank(), b.role(), host, f.num("progress_threads"))
	} else {
		fmt.Printf("Init nixl worker, dev all rank %d, type %s, hostname %s\n", rt.getRank(), b.role(), host)
	}
	fmt.Println("Waiting for all processes to start... (expecting 2 total: 1 initiators and 1 targets)")
	if err := rt.barrier("start_barrier"); err != nil {
		fmt.Fprintln(os.Stderr, "Failed to synchronize at start barrier")
		fmt.Fprintln(os.Stderr, "Failed to synchronize all processes")
		return 1
	}
	fmt.Println("All processes are ready to proceed")
	if err := b.exchangeMetadata(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if rt.getRank() == 0 {
		fmt.Print(configBlock(f))
		fmt.Print(tableHeader())
	}
	if err := b.sweep(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := rt.barrier("sync"); err != nil {
		return 1
	}
	if b.isAborted() {
		return 1
	}
	return 0
}

func (b *bench) role() string {
	if b.rt.getRank() == 0 {
		return "initiator"
	}
	return "target"
}

// exchangeMetadata: the target sends its agent metadata (size, then the
// blob) to its initiator; here the blob carries its data socket address.
func (b *bench) exchangeMetadata() error {
	if b.rt.getRank() == 1 {
		addr := standinAddr(os.Getenv("NIXLBENCH_STANDIN_ADDR"))
		tg, err := listenTarget(addr)
		if err != nil {
			return err
		}
		tg.check = b.f.on("check_consistency")
		b.tg = tg
		md := []byte("nixl-standin-md:" + tg.ln.Addr().String())
		if err := b.rt.sendInt(len(md), 0); err != nil {
			return err
		}
		return b.rt.sendChar(md, 0)
	}
	n, err := b.rt.recvInt(1)
	if err != nil {
		return fmt.Errorf("NIXL: failed to receive metadata size")
	}
	md, err := b.rt.recvChar(1)
	if err != nil || len(md) != n {
		return fmt.Errorf("NIXL: failed to receive metadata")
	}
	addr, ok := strings.CutPrefix(string(md), "nixl-standin-md:")
	if !ok {
		return fmt.Errorf("NIXL: loadRemoteMD failed: bad metadata")
	}
	in, err := dialTarget(addr)
	if err != nil {
		return fmt.Errorf("NIXL: loadRemoteMD failed: %v", err)
	}
	b.in = in
	return nil
}

// sweep runs every (block, batch) step.
func (b *bench) sweep() error {
	f := b.f
	for block := f.num("start_block_size"); block <= f.num("max_block_size"); block *= 2 {
		for batch := f.num("start_batch_size"); batch <= f.num("max_batch_size"); batch *= 2 {
			if b.isAborted() {
				return nil
			}
			if err := b.step(block, batch); err != nil {
				return err
			}
		}
	}
	return nil
}

// step: descriptors from the target, barrier, warm-up, barrier, timed
// transfers, barrier; rank 0 prints the row.
func (b *bench) step(block, batch int64) error {
	rt, f := b.rt, b.f
	iters, warm := int(f.num("num_iter")), int(f.num("warmup_iter"))
	if block > 1<<20 {
		iters /= int(f.num("large_blk_iter_ftr"))
		warm /= int(f.num("large_blk_iter_ftr"))
	}
	op := byte(opWrite)
	if f.str("op_type") == "READ" {
		op = opRead
	}
	pattern := byte(block + batch)
	if err := b.descriptors(block, batch); err != nil {
		return err
	}
	if err := rt.barrier("sync"); err != nil {
		return fmt.Errorf("Failed to synchronize")
	}
	if err := b.phase(op, block, batch, max(warm, 1), pattern, nil); err != nil {
		return err
	}
	if err := rt.barrier("sync"); err != nil {
		return fmt.Errorf("Failed to synchronize")
	}
	var st stats
	if err := b.phase(op, block, batch, max(iters, 1), pattern, &st); err != nil {
		return err
	}
	if err := rt.barrier("sync"); err != nil {
		return fmt.Errorf("Failed to synchronize")
	}
	if rt.getRank() == 0 {
		fmt.Print(row(st))
	}
	return nil
}

func (b *bench) descriptors(block, batch int64) error {
	if b.rt.getRank() == 1 {
		desc := []byte(fmt.Sprintf("desc:%d:%d:%s", block, batch, b.tg.ln.Addr()))
		if err := b.rt.sendInt(len(desc), 0); err != nil {
			return err
		}
		return b.rt.sendChar(desc, 0)
	}
	if _, err := b.rt.recvInt(1); err != nil {
		return fmt.Errorf("NIXL: failed to receive descriptor list size")
	}
	_, err := b.rt.recvChar(1)
	return err
}

// phase: the initiator transfers, the target serves until the end mark.
func (b *bench) phase(op byte, block, batch int64, iters int, pattern byte, st *stats) error {
	if b.rt.getRank() == 1 {
		err := b.tg.serve(pattern)
		if err == errConsistency {
			fmt.Fprintln(os.Stderr, "Consistency check failed")
		}
		return err
	}
	ss, total, err := b.in.run(op, block, batch, iters, pattern, b.f.on("check_consistency"))
	if err != nil {
		if err == errConsistency {
			fmt.Fprintln(os.Stderr, "Consistency check failed")
		}
		return err
	}
	if st != nil {
		*st = summarize(block, batch, ss, total)
	}
	return b.in.end()
}

func (b *bench) abort() {
	b.mu.Lock()
	b.aborted = true
	b.mu.Unlock()
}

func (b *bench) isAborted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.aborted
}

// standinAddr is where the target listens: loopback by default (the local
// lanes keep test traffic there); "auto" takes this host's (pod's) first
// non-loopback IPv4 address, for targets in pods whose initiators are
// elsewhere; anything else is used as given.
func standinAddr(v string) string {
	switch v {
	case "":
		return "127.0.0.1"
	case "auto":
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
				return ip.IP.String()
			}
		}
		return "127.0.0.1"
	}
	return v
}

// rtIface is what the benchmark needs of a runtime (ETCD or ASIO).
type rtIface interface {
	getRank() int
	barrier(id string) error
	sendInt(v, dst int) error
	sendChar(data []byte, dst int) error
	recvInt(src int) (int, error)
	recvChar(src int) ([]byte, error)
	cleanup()
}
