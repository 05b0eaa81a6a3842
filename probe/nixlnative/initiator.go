// Package nixlnative is the NIXL probe's native initiator (rdmabench-nixl
// --native): nixlbench's timed loop, in Go, through the C API of the very
// NIXL the serving image's python3 loads (libnixl_capi.so, with purego),
// against the Python probe's target. The Python probe times NIXL as vLLM's
// NixlConnector drives it, Python's per-call cost included (1.7–4.6 µs a
// transfer measured on H200 hosts); this loop costs what nixlbench's C++
// loop costs, so that the two read as the fabric's and NIXL's figure
// beside vLLM's. Its output is the Python probe's: the same banner,
// configuration block and nixlbench table, read by the same parser.
package nixlnative

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/rdmabench/rdmabench/probe/dl"
	"github.com/rdmabench/rdmabench/probe/nixl"
)

// Program is the probe's name, the prefix of its own lines.
const Program = "rdmabench-nixl"

// Subcommand is the native initiator's first argument to the program
// it is built into (rdmabench-nixl --native starts it there).
const Subcommand = nixl.NativeSubcommand

const (
	formatVersion = "1"
	doneNotif     = "rdmabench-nixl:done"
	nixlbenchNote = "0xBEEF" // nixlbench's, with every post
)

// Run runs the native initiator: 0 measured, 1 failed (a line
// "rdmabench-nixl: ..." says why), 2 bad arguments.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "%s: error: %v\n", Program, err)
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeLimit)
	defer cancel()
	// NIXL, UCX and the CUDA context are used from one OS thread, as a C
	// program would: the context is current on the thread that made it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	r, err := dialEtcd(o.etcd, o.key)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", Program, o.role, err)
		return 1
	}
	in := &initiator{o: o, role: o.role, etcd: r, out: stdout}
	if o.role == "target" {
		err = in.serve(ctx)
	} else {
		err = in.run(ctx)
	}
	in.cleanup()
	// C's stdout is not flushed by a Go program's exit: what UCX printed
	// last (its protocol tables are the transport evidence) would be lost.
	if in.lib != nil {
		in.lib.fflush(nil)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (past --time-limit %s)", err, o.timeLimit)
		}
		fmt.Fprintf(stderr, "%s: %s: %v\n", Program, o.role, err)
		r.sayFailed(o.role, err.Error())
		r.close()
		return 1
	}
	r.close()
	return 0
}

// cFirst flushes C's stdio before each write.
type cFirst struct {
	w     io.Writer
	flush func()
}

func (c cFirst) Write(p []byte) (int, error) {
	c.flush()
	return c.w.Write(p)
}

// initiator is one side of the pair (the initiator, or the target: serve)
// and holds what the run made, for cleanup on every way out.
type initiator struct {
	o    *options
	role string
	etcd *rendezvous
	out  io.Writer

	lib     *capi
	agent   uintptr
	backend uintptr
	optArgs uintptr // the backend, for registration and preparation
	reg     uintptr
	mem     *regions
	remote  string
	cu      *cuda
	libnixl nixlLib
	plugins []string
	ucx     string
	notify  uintptr // the backend and nixlbench's notification, for the requests
}

func (in *initiator) run(ctx context.Context) error {
	o := in.o
	deadline := time.Now().Add(o.rendezvous)
	tgt, err := in.etcd.wait(ctx, "target", deadline)
	if err != nil {
		return err
	}
	if err := in.start(ctx); err != nil {
		return err
	}
	capacity := o.maxBlock * int64(o.blocks)
	if len(tgt.Regions) != o.regions || tgt.Capacity < capacity {
		return fmt.Errorf("the target registered %d regions of %d B, this initiator needs %d of %d B: run both with the same sizes",
			len(tgt.Regions), tgt.Capacity, o.regions, capacity)
	}
	if err := in.register(o.regionBytes()); err != nil {
		return err
	}
	if err := in.publish(ctx); err != nil {
		return err
	}
	if err := in.loadPeer(tgt.Metadata); err != nil {
		return err
	}
	fmt.Fprintln(in.out, in.banner())
	in.printConfig(tgt)
	printHeader(in.out)
	var failed string
	for block := o.minBlock; block <= o.maxBlock; block *= 2 {
		problem, err := in.measure(ctx, tgt, block)
		if err != nil {
			return err
		}
		if failed == "" {
			failed = problem
		}
	}
	fmt.Fprintln(in.out, strings.Repeat("-", 160))
	done := []byte(doneNotif)
	if err := check("nixl_capi_gen_notif", in.lib.genNotif(in.agent, in.remote, unsafe.Pointer(&done[0]), uintptr(len(done)), in.optArgs)); err != nil {
		return err
	}
	// The target has read this side's key; once its own is gone (revoked
	// as it ends), this side's may go too.
	in.flushNotif(ctx, 5*time.Second)
	if failed != "" {
		return errors.New(failed)
	}
	return nil
}

// start loads NIXL's C API (the image's), makes the agent as nixlbench
// makes it (no progress thread) and the backend with nixlbench's UCX
// parameters, and, for VRAM, the device's primary context.
func (in *initiator) start(ctx context.Context) error {
	o := in.o
	lib, err := locate(ctx)
	in.libnixl = lib
	if err != nil {
		return err
	}
	if lib.libnixl != "" {
		if _, err := openNIXL(lib.libnixl); err != nil {
			return err
		}
	}
	if in.lib, err = loadCAPI(lib.capi); err != nil {
		return fmt.Errorf("%w (found by %s; set %s to NIXL's libnixl_capi.so)", err, lib.foundBy, CAPIEnv)
	}
	// UCX prints its tables through C's buffered stdout; this side writes
	// to the same file unbuffered: C's buffer goes first, so that no line
	// of ours lands inside one of UCX's.
	in.out = cFirst{w: in.out, flush: func() { in.lib.fflush(nil) }}
	if in.seg() == "VRAM" {
		if in.cu, err = openCUDA(o.device); err != nil {
			return err
		}
	}
	c := in.lib
	// nixlAgentConfig's defaults, with no progress thread (nixlbench's --enable_pt=0).
	cfg := agentConfig{progThread: false, listenThread: false, listenPort: 0, threadSync: 0, numWorkers: 1,
		pthrDelayUs: 0, lthrDelayUs: 100000, telemetry: false}
	if err := check("nixl_capi_create_configured_agent", c.createConfiguredAgent(o.name+"-"+in.role, &cfg, &in.agent)); err != nil {
		return err
	}
	if in.plugins, err = in.pluginList(); err != nil {
		return err
	}
	backend := strings.ToUpper(o.backend)
	if !slices.Contains(in.plugins, backend) {
		return fmt.Errorf("the image's NIXL has no %s plugin (it has %s); set NIXL_PLUGIN_DIR to the folder of libplugin_%s.so or choose a backend it has",
			backend, strings.Join(in.plugins, ","), backend)
	}
	var params uintptr
	if err := check("nixl_capi_create_params", c.createParams(&params)); err != nil {
		return err
	}
	defer c.destroyParams(params)
	for _, kv := range o.backendParams {
		if err := check("nixl_capi_params_add "+kv[0], c.paramsAdd(params, kv[0], kv[1])); err != nil {
			return err
		}
	}
	if err := check("nixl_capi_create_backend "+backend, c.createBackend(in.agent, backend, params, &in.backend)); err != nil {
		return err
	}
	in.ucx = ucxVersion()
	if err := check("nixl_capi_create_opt_args", c.createOptArgs(&in.optArgs)); err != nil {
		return err
	}
	if err := check("nixl_capi_opt_args_add_backend", c.optArgsAddBackend(in.optArgs, in.backend)); err != nil {
		return err
	}
	// Every request carries nixlbench's notification, as its posts do.
	note := []byte(nixlbenchNote)
	if err := check("nixl_capi_create_opt_args", c.createOptArgs(&in.notify)); err != nil {
		return err
	}
	if err := check("nixl_capi_opt_args_add_backend", c.optArgsAddBackend(in.notify, in.backend)); err != nil {
		return err
	}
	if err := check("nixl_capi_opt_args_set_notif_msg", c.optArgsSetNotifMsg(in.notify, unsafe.Pointer(&note[0]), uintptr(len(note)))); err != nil {
		return err
	}
	return check("nixl_capi_opt_args_set_has_notif", c.optArgsSetHasNotif(in.notify, true))
}

func (in *initiator) pluginList() ([]string, error) {
	c := in.lib
	var list, n uintptr
	if err := check("nixl_capi_get_available_plugins", c.getAvailablePlugins(in.agent, &list)); err != nil {
		return nil, err
	}
	defer c.destroyStringList(list)
	if err := check("nixl_capi_string_list_size", c.stringListSize(list, &n)); err != nil {
		return nil, err
	}
	var out []string
	for i := range n {
		var s *byte
		if err := check("nixl_capi_string_list_get", c.stringListGet(list, i, &s)); err != nil {
			return nil, err
		}
		out = append(out, dl.GoString(s))
	}
	return out, nil
}

func (in *initiator) register(capacity int64) error {
	o, c := in.o, in.lib
	var err error
	if in.mem, err = newRegions(in.seg(), o.regions, capacity, o.maxBlock*int64(o.blocks), o.device, in.cu); err != nil {
		return err
	}
	// READ: the target's pattern is read; WRITE: the initiator's written.
	if (o.op == "WRITE") == (in.role == "initiator") {
		if err := in.mem.fill(); err != nil {
			return err
		}
	}
	if err := check("nixl_capi_create_reg_dlist", c.createRegDlist(memType(in.seg()), &in.reg)); err != nil {
		return err
	}
	for _, a := range in.mem.addrs {
		if err := check("nixl_capi_reg_dlist_add_desc", c.regDlistAddDesc(in.reg, a, uintptr(capacity), uint64(o.device), nil, 0)); err != nil {
			c.destroyRegDlist(in.reg)
			in.reg = 0 // never registered: nothing to deregister
			return err
		}
	}
	if err := check("nixl_capi_register_mem", c.registerMem(in.agent, in.reg, in.optArgs)); err != nil {
		in.mem.free()
		c.destroyRegDlist(in.reg)
		in.reg, in.mem = 0, nil
		return err
	}
	return nil
}

func (in *initiator) publish(ctx context.Context) error {
	c := in.lib
	var data unsafe.Pointer
	var n uintptr
	if err := check("nixl_capi_get_local_md", c.getLocalMD(in.agent, &data, &n)); err != nil {
		return err
	}
	md := append([]byte(nil), unsafe.Slice((*byte)(data), n)...)
	c.free(data)
	return in.etcd.publish(ctx, in.role, &peerInfo{Name: in.o.name + "-" + in.role, Metadata: md, Regions: in.mem.addrs,
		Device: in.o.device, Seg: in.seg(), Capacity: in.mem.capacity})
}

// seg is this side's memory.
func (in *initiator) seg() string {
	if in.role == "target" {
		return in.o.targetSeg
	}
	return in.o.initiatorSeg
}

func (in *initiator) loadPeer(md []byte) error {
	if len(md) == 0 {
		return errors.New("the peer published no agent metadata")
	}
	var name *byte
	if err := check("nixl_capi_load_remote_md", in.lib.loadRemoteMD(in.agent, unsafe.Pointer(&md[0]), uintptr(len(md)), &name)); err != nil {
		return err
	}
	in.remote = dl.GoString(name)
	in.lib.free(unsafe.Pointer(name))
	return nil
}

// cleanup undoes what start and register made, in reverse; every step is
// best effort (NIXL may be what failed).
func (in *initiator) cleanup() {
	c := in.lib
	if c == nil {
		return
	}
	if in.remote != "" {
		c.invalidateRemoteMD(in.agent, in.remote)
	}
	if in.reg != 0 {
		c.deregisterMem(in.agent, in.reg, in.optArgs)
		c.destroyRegDlist(in.reg)
	}
	for _, a := range []uintptr{in.optArgs, in.notify} {
		if a != 0 {
			c.destroyOptArgs(a)
		}
	}
	if in.backend != 0 {
		c.destroyBackend(in.backend) // the handle; the engine is the agent's
	}
	if in.agent != 0 {
		c.destroyAgent(in.agent) // and its backends
	}
	if in.mem != nil {
		in.mem.free()
	}
}

func memType(seg string) int32 {
	if seg == "VRAM" {
		return memVRAM
	}
	return memDRAM
}

// flushNotif waits up to d for the target's key to go (it ends on "done"),
// progressing NIXL meanwhile: without a progress thread the notification
// may still be queued in UCX when genNotif returns, and only a NIXL call
// (getNotifs progresses the backend's workers) sends it.
func (in *initiator) flushNotif(ctx context.Context, d time.Duration) {
	c := in.lib
	var m uintptr
	if c.createNotifMap(&m) != capiSuccess {
		in.etcd.gone(ctx, "target", d)
		return
	}
	defer c.destroyNotifMap(m)
	poll := c.pollCall(in.agent, m)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for range 100 {
			poll.call()
		}
		c.notifMapClear(m)
		if in.etcd.gone(ctx, "target", 20*time.Millisecond) {
			return
		}
	}
}

// openNIXL loads the libnixl.so the image's python3 loads, first: the C
// API beside it links against it by soname.
func openNIXL(path string) (uintptr, error) { return dl.Open(path) }
