package nccl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
	"unsafe"
)

// CopyCollective is the probe's pseudo-collective of one process: its GPU
// (--device) READs another of the same host (--peer-device) with the copy
// engines (cuMemcpyPeerAsync), over NVLink or PCIe peer-to-peer. It is the
// bottom layer of a one-host pair's waterfall, the ceiling UCX's cuda_ipc,
// NIXL and NCCL are held against; no NCCL is loaded.
const CopyCollective = "copy"

// copyPattern is what the source GPU holds for the data check.
const copyPattern = 0xC0DE0000

// cudaPeerAccessAlreadyEnabled is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED.
const cudaPeerAccessAlreadyEnabled = 704

// validateCopy: one process, and a peer that is another GPU.
func (o *Options) validateCopy() []error {
	var errs []error
	if o.Ranks != 1 {
		errs = append(errs, fmt.Errorf("collective copy is one process (it reads the peer GPU itself): --ranks %d, want 1", o.Ranks))
	}
	switch {
	case o.PeerDevice < 0:
		errs = append(errs, errors.New("collective copy needs --peer-device: the GPU ordinal (after CUDA_VISIBLE_DEVICES) to read from"))
	case o.PeerDevice == o.Device:
		errs = append(errs, fmt.Errorf("--peer-device %d is --device itself: a copy within one GPU measures its memory, not the link; name another GPU of this host", o.PeerDevice))
	}
	return errs
}

// copier is the copy's state: the two GPUs' primary contexts, whether
// peer access is direct, a stream on the reader's GPU, one buffer on each.
type copier struct {
	o      Options
	cu     *cuda
	typ    dataType
	out    io.Writer
	peer   int32
	ctx    uintptr // the peer's primary context
	direct bool
	stream uintptr
	dst    uint64 // on --device
	src    uint64 // on --peer-device
	sum    float64
	n      int
	wrong  int64
	runs   int // sizes with wrong elements
}

// runCopy measures the copy at every size, as the collectives' tables.
func runCopy(o Options, out io.Writer) error {
	typ, _ := lookupType(o.DataType)
	cu, err := loadCUDA(o.CUDA)
	if err != nil {
		return err
	}
	if err := cu.loadPeer(o.CUDA); err != nil {
		return err
	}
	if err := cu.open(o.Device); err != nil {
		return err
	}
	defer cu.close()
	c := &copier{o: o, cu: cu, typ: typ, out: out}
	defer c.close()
	if err := c.init(); err != nil {
		return err
	}
	return c.run()
}

// init retains the peer's primary context, enables peer access where the
// driver says it can (else cuMemcpyPeer stages through host memory), and
// allocates a buffer of the largest size on each GPU.
func (c *copier) init() error {
	var n int32
	if err := c.cu.check("cuDeviceGetCount", c.cu.cuDeviceGetCount(&n)); err != nil {
		return err
	}
	if c.o.PeerDevice >= int(n) {
		return fmt.Errorf("--peer-device %d: this process sees %d GPUs (CUDA_VISIBLE_DEVICES=%q); the copy needs both GPUs of one host in its view: list both in CUDA_VISIBLE_DEVICES",
			c.o.PeerDevice, n, getenv("CUDA_VISIBLE_DEVICES"))
	}
	if err := c.cu.check("cuDeviceGet", c.cu.cuDeviceGet(&c.peer, int32(c.o.PeerDevice))); err != nil {
		return err
	}
	if err := c.cu.check("cuDevicePrimaryCtxRetain", c.cu.cuDevicePrimaryCtxRetain(&c.ctx, c.peer)); err != nil {
		return err
	}
	var can int32
	if err := c.cu.check("cuDeviceCanAccessPeer", c.cu.cuDeviceCanAccessPeer(&can, c.cu.dev, c.peer)); err != nil {
		return err
	}
	if can != 0 {
		if res := c.cu.cuCtxEnablePeerAccess(c.ctx, 0); res != 0 && res != cudaPeerAccessAlreadyEnabled {
			return c.cu.check("cuCtxEnablePeerAccess", res)
		}
		c.direct = true
	}
	if err := c.cu.check("cuStreamCreate", c.cu.cuStreamCreate(&c.stream, 0)); err != nil {
		return err
	}
	var err error
	if c.dst, err = c.cu.alloc(uint64(c.o.MaxBytes)); err != nil {
		return err
	}
	return c.onPeer(func() error {
		c.src, err = c.cu.alloc(uint64(c.o.MaxBytes))
		return err
	})
}

// onPeer runs f with the peer's context current (its allocation and
// fill), then makes this GPU's current again.
func (c *copier) onPeer(f func() error) error {
	if err := c.cu.check("cuCtxSetCurrent", c.cu.cuCtxSetCurrent(c.ctx)); err != nil {
		return err
	}
	ferr := f()
	if err := c.cu.check("cuCtxSetCurrent", c.cu.cuCtxSetCurrent(c.cu.ctx)); err != nil {
		return err
	}
	return ferr
}

func (c *copier) close() {
	if c.dst != 0 {
		c.cu.cuMemFree(c.dst)
	}
	if c.src != 0 {
		c.cu.cuMemFree(c.src)
	}
	if c.stream != 0 {
		c.cu.cuStreamDestroy(c.stream)
	}
	if c.ctx != 0 {
		c.cu.cuDevicePrimaryCtxRelease(c.peer)
	}
}

// p2p says how the bytes go: "direct" (peer access: NVLink or PCIe
// peer-to-peer) or "staged" (no peer access: through host memory).
func (c *copier) p2p() string {
	if c.direct {
		return "direct"
	}
	return "staged"
}

func (c *copier) run() error {
	for _, l := range c.header() {
		if err := c.println(l); err != nil {
			return err
		}
	}
	for _, size := range sweep(c.o.MinBytes, c.o.MaxBytes, c.o.StepFactor) {
		if err := c.row(size); err != nil {
			return err
		}
	}
	for _, l := range footerLines(CopyCollective, c.runs, c.sum, c.n) {
		if err := c.println(l); err != nil {
			return err
		}
	}
	if c.wrong > 0 {
		return fmt.Errorf("%d wrong elements: the copy from GPU %d returned wrong data", c.wrong, c.o.PeerDevice)
	}
	return nil
}

// header is the collectives' banner with the copy's facts in the version
// line (copy-p2p: the parser's transport), one device line (this
// process's rank) and the peer on a line of its own.
func (c *copier) header() []string {
	host := c.o.Host
	if host == "" {
		host = hostname()
	}
	peerName, peerBus := c.peerDescr()
	how := "direct (cuCtxEnablePeerAccess: NVLink or PCIe peer-to-peer)"
	if !c.direct {
		how = "staged through host memory (cuDeviceCanAccessPeer says no peer access)"
	}
	lines := []string{
		fmt.Sprintf("# %s version %s cuda-driver=%d copy-device=%d copy-peer=%d copy-p2p=%s",
			Program, Version, c.cu.driverVersion(), c.o.Device, c.o.PeerDevice, c.p2p()),
		"# Collective test starting: " + CopyCollective + " (" + Program + ")",
		fmt.Sprintf("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: %d(factor) warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0 unalign: 0",
			c.o.MinBytes, c.o.MaxBytes, c.o.StepFactor, c.o.Warmup, c.o.Iters, b2i(c.o.Check)),
		"#",
		"# Using devices",
		fmt.Sprintf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s",
			0, os.Getpid(), host, c.o.Device, pciShort(c.cu.busID()), c.cu.name()),
		fmt.Sprintf("#  Peer: device %2d [%s] %s, read by cuMemcpyPeerAsync, %s", c.o.PeerDevice, pciShort(peerBus), peerName, how),
		"#  In-place columns: the same copy timed again",
	}
	return append(lines, columnHeader()...)
}

func (c *copier) peerDescr() (name, bus string) {
	nb, bb := make([]byte, 256), make([]byte, 64)
	name, bus = "unknown", ""
	if c.cu.cuDeviceGetName(&nb[0], int32(len(nb)), c.peer) == 0 {
		name = cut(nb)
	}
	if c.cu.cuDeviceGetPCIBusId(&bb[0], int32(len(bb)), c.peer) == 0 {
		bus = cut(bb)
	}
	return name, bus
}

// row checks one size's data, warms up, then times the copy twice (the
// table's out-of-place and in-place halves); busbw is algbw.
func (c *copier) row(size int64) error {
	count := size / int64(c.typ.size)
	line := fmt.Sprintf("%12d  %12d  %8s  %6s  %6d", size, count, c.typ.name, "none", -1)
	wrong, err := c.check(size)
	if err != nil {
		return err
	}
	if err := c.copies(size, c.o.Warmup); err != nil {
		return err
	}
	for half := range 2 {
		sec, err := c.timed(size)
		if err != nil {
			return err
		}
		bw := float64(size) / 1e9 / sec
		c.sum += bw
		c.n++
		line += fmt.Sprintf("  %7s  %6s  %6s", floatStr(sec*1e6, 7), floatStr(bw, 6), floatStr(bw, 6))
		if half == 0 && c.o.Check {
			line += fmt.Sprintf("  %6d", wrong)
		} else {
			line += "    N/A"
		}
	}
	return c.println(line)
}

// timed is Iters copies back to back, timed on the host to the stream's
// end, as the collectives' bench: seconds per copy.
func (c *copier) timed(size int64) (float64, error) {
	t0 := time.Now()
	if err := c.copies(size, c.o.Iters); err != nil {
		return 0, err
	}
	return time.Since(t0).Seconds() / float64(c.o.Iters), nil
}

// copies queues n copies of size bytes from the peer and waits for them.
func (c *copier) copies(size int64, n int) error {
	for range n {
		if err := c.cu.check("cuMemcpyPeerAsync", c.cu.cuMemcpyPeerAsync(c.dst, c.cu.ctx, c.src, c.ctx, uintptr(size), c.stream)); err != nil {
			return err
		}
	}
	return c.cu.check("cuStreamSynchronize", c.cu.cuStreamSynchronize(c.stream))
}

// check fills the source with a pattern and zeroes the destination, copies
// once, and reads back its first, middle and last words: the wrong ones.
func (c *copier) check(size int64) (int64, error) {
	n := size / 4
	if !c.o.Check || n == 0 {
		return 0, nil
	}
	want := uint32(copyPattern) | uint32(c.o.PeerDevice&0xffff)
	if err := c.onPeer(func() error { return c.cu.check("cuMemsetD32", c.cu.cuMemsetD32(c.src, want, uintptr(n))) }); err != nil {
		return 0, err
	}
	if err := c.cu.check("cuMemsetD32", c.cu.cuMemsetD32(c.dst, 0, uintptr(n))); err != nil {
		return 0, err
	}
	if err := c.copies(size, 1); err != nil {
		return 0, err
	}
	var wrong int64
	for _, i := range []int64{0, n / 2, n - 1} {
		var got uint32
		if err := c.cu.check("cuMemcpyDtoH", c.cu.cuMemcpyDtoH(unsafe.Pointer(&got), c.dst+uint64(i*4), 4)); err != nil {
			return 0, err
		}
		if got != want {
			wrong++
		}
	}
	if wrong > 0 {
		c.wrong += wrong
		c.runs++
	}
	return wrong, nil
}

func (c *copier) println(s string) error {
	_, err := fmt.Fprintln(c.out, s)
	return err
}
