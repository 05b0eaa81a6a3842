package nixlnative

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/rdmabench/rdmabench/probe/dl"
)

// NIXL's C API (libnixl_capi.so, src/bindings/rust/wrapper.h), the calls
// the initiator makes. NIXL ≥ 1.0 installs the library beside libnixl.so
// (and its wheels ship it in their .mesonpy.libs), whatever the build's
// Rust option: its declarations are mirrored here.

// Statuses (nixl_capi_status_t).
const (
	capiSuccess      = 0
	capiInProg       = 1
	capiInvalidParam = -1
)

var capiStatusNames = map[int32]string{
	0: "NIXL_CAPI_SUCCESS", 1: "NIXL_CAPI_IN_PROG", -1: "NIXL_CAPI_ERROR_INVALID_PARAM",
	-2: "NIXL_CAPI_ERROR_BACKEND", -3: "NIXL_CAPI_ERROR_INVALID_STATE", -4: "NIXL_CAPI_ERROR_EXCEPTION",
	-5: "NIXL_CAPI_ERROR_NO_TELEMETRY", -6: "NIXL_CAPI_ERROR_NOT_FOUND",
}

func statusName(s int32) string {
	if n, ok := capiStatusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status %d", s)
}

// Memory types (nixl_capi_mem_type_t) and operations (nixl_capi_xfer_op_t).
const (
	memDRAM = 0
	memVRAM = 1
	opRead  = 0
	opWrite = 1
)

// agentConfig is nixl_capi_agent_config_t, laid out as C lays it out on
// 64-bit Linux (40 bytes).
type agentConfig struct {
	progThread   bool
	listenThread bool
	_            [2]byte
	listenPort   int32
	threadSync   int32 // nixl_capi_thread_sync_t: 0 = NONE (NIXL's default)
	numWorkers   uint32
	pthrDelayUs  uint64
	lthrDelayUs  uint64
	telemetry    bool
	_            [7]byte
}

// capi is the loaded library. Handles are the C API's opaque pointers.
type capi struct {
	path string

	createConfiguredAgent  func(name string, cfg *agentConfig, agent *uintptr) int32
	destroyAgent           func(agent uintptr) int32
	getAvailablePlugins    func(agent uintptr, list *uintptr) int32
	stringListSize         func(list uintptr, n *uintptr) int32
	stringListGet          func(list uintptr, i uintptr, s **byte) int32
	destroyStringList      func(list uintptr) int32
	createParams           func(params *uintptr) int32
	paramsAdd              func(params uintptr, key, value string) int32
	destroyParams          func(params uintptr) int32
	createBackend          func(agent uintptr, plugin string, params uintptr, backend *uintptr) int32
	destroyBackend         func(backend uintptr) int32
	createOptArgs          func(args *uintptr) int32
	destroyOptArgs         func(args uintptr) int32
	optArgsAddBackend      func(args, backend uintptr) int32
	optArgsSetNotifMsg     func(args uintptr, data unsafe.Pointer, n uintptr) int32
	optArgsSetHasNotif     func(args uintptr, has bool) int32
	createRegDlist         func(mem int32, dlist *uintptr) int32
	regDlistAddDesc        func(dlist, addr, n uintptr, dev uint64, md unsafe.Pointer, mdLen uintptr) int32
	destroyRegDlist        func(dlist uintptr) int32
	registerMem            func(agent, dlist, args uintptr) int32
	deregisterMem          func(agent, dlist, args uintptr) int32
	getLocalMD             func(agent uintptr, data *unsafe.Pointer, n *uintptr) int32
	loadRemoteMD           func(agent uintptr, data unsafe.Pointer, n uintptr, name **byte) int32
	invalidateRemoteMD     func(agent uintptr, name string) int32
	createXferDlist        func(mem int32, dlist *uintptr) int32
	xferDlistAddDesc       func(dlist, addr, n uintptr, dev uint64) int32
	destroyXferDlist       func(dlist uintptr) int32
	prepXferDlist          func(agent uintptr, agentName string, dlist uintptr, handle *uintptr, args uintptr) int32
	releaseXferDlistHandle func(agent, handle uintptr) int32
	makeXferReq            func(agent uintptr, op int32, local uintptr, localIdx *int32, nLocal uintptr, remote uintptr, remoteIdx *int32, nRemote uintptr, req *uintptr, args uintptr) int32
	releaseXferReq         func(agent, req uintptr) int32
	destroyXferReq         func(req uintptr) int32
	genNotif               func(agent uintptr, remote string, data unsafe.Pointer, n uintptr, args uintptr) int32
	createNotifMap         func(m *uintptr) int32
	destroyNotifMap        func(m uintptr) int32
	notifMapClear          func(m uintptr) int32

	// The hot loops' calls, called through purego.SyscallN with their
	// arguments bound once (boundCall): a RegisterLibFunc function goes
	// through reflection (BenchmarkCAPICall on a 2-core VM: 460 ns and three
	// allocations a call against 97 ns and none). The initiator's timed loop posts and polls; the
	// target's loop reads notifications, and its speed is the initiator's:
	// each transfer's flush waits for the target's UCX to answer.
	postXferReq, getXferStatus           uintptr
	getNotifsFn, notifsSizeFn, notifAtFn uintptr

	free   func(p unsafe.Pointer)
	fflush func(stream unsafe.Pointer) int32
}

// loadCAPI opens libnixl_capi.so (by path or soname) and binds its calls.
func loadCAPI(path string) (*capi, error) {
	lib, err := dl.Open(path)
	if err != nil {
		return nil, err
	}
	c := &capi{path: path}
	err = dl.Bind(lib, path, map[string]any{
		"nixl_capi_create_configured_agent": &c.createConfiguredAgent, "nixl_capi_destroy_agent": &c.destroyAgent,
		"nixl_capi_get_available_plugins": &c.getAvailablePlugins, "nixl_capi_string_list_size": &c.stringListSize,
		"nixl_capi_string_list_get": &c.stringListGet, "nixl_capi_destroy_string_list": &c.destroyStringList,
		"nixl_capi_create_params": &c.createParams, "nixl_capi_params_add": &c.paramsAdd,
		"nixl_capi_destroy_params": &c.destroyParams, "nixl_capi_create_backend": &c.createBackend,
		"nixl_capi_destroy_backend": &c.destroyBackend, "nixl_capi_create_opt_args": &c.createOptArgs,
		"nixl_capi_destroy_opt_args": &c.destroyOptArgs, "nixl_capi_opt_args_add_backend": &c.optArgsAddBackend,
		"nixl_capi_opt_args_set_notif_msg": &c.optArgsSetNotifMsg, "nixl_capi_opt_args_set_has_notif": &c.optArgsSetHasNotif,
		"nixl_capi_create_reg_dlist": &c.createRegDlist, "nixl_capi_reg_dlist_add_desc": &c.regDlistAddDesc,
		"nixl_capi_destroy_reg_dlist": &c.destroyRegDlist, "nixl_capi_register_mem": &c.registerMem,
		"nixl_capi_deregister_mem": &c.deregisterMem, "nixl_capi_get_local_md": &c.getLocalMD,
		"nixl_capi_load_remote_md": &c.loadRemoteMD, "nixl_capi_invalidate_remote_md": &c.invalidateRemoteMD,
		"nixl_capi_create_xfer_dlist": &c.createXferDlist, "nixl_capi_xfer_dlist_add_desc": &c.xferDlistAddDesc,
		"nixl_capi_destroy_xfer_dlist": &c.destroyXferDlist, "nixl_capi_prep_xfer_dlist": &c.prepXferDlist,
		"nixl_capi_release_xfer_dlist_handle": &c.releaseXferDlistHandle, "nixl_capi_make_xfer_req": &c.makeXferReq,
		"nixl_capi_release_xfer_req": &c.releaseXferReq, "nixl_capi_destroy_xfer_req": &c.destroyXferReq,
		"nixl_capi_gen_notif":        &c.genNotif,
		"nixl_capi_create_notif_map": &c.createNotifMap, "nixl_capi_destroy_notif_map": &c.destroyNotifMap,
		"nixl_capi_notif_map_clear": &c.notifMapClear,
	})
	if err != nil {
		return nil, fmt.Errorf("%w (rdmabench's native initiator wants NIXL's C API of 1.x)", err)
	}
	if c.postXferReq, err = dl.Sym(lib, path, "nixl_capi_post_xfer_req"); err != nil {
		return nil, err
	}
	if c.getXferStatus, err = dl.Sym(lib, path, "nixl_capi_get_xfer_status"); err != nil {
		return nil, err
	}
	if c.getNotifsFn, err = dl.Sym(lib, path, "nixl_capi_get_notifs"); err != nil {
		return nil, err
	}
	if c.notifsSizeFn, err = dl.Sym(lib, path, "nixl_capi_notif_map_get_notifs_size"); err != nil {
		return nil, err
	}
	if c.notifAtFn, err = dl.Sym(lib, path, "nixl_capi_notif_map_get_notif"); err != nil {
		return nil, err
	}
	// The metadata and names the C API returns are malloc'ed.
	libc, err := dl.Open("libc.so.6")
	if err != nil {
		return nil, err
	}
	if err := dl.Bind(libc, "libc.so.6", map[string]any{"free": &c.free, "fflush": &c.fflush}); err != nil {
		return nil, err
	}
	return c, nil
}

// check turns a status into an error naming the call.
func check(call string, s int32) error {
	if s == capiSuccess {
		return nil
	}
	return fmt.Errorf("%s: %s", call, statusName(s))
}

// boundCall is one C API call with its arguments fixed, made again and
// again without allocating: SyscallN's variadic slice is made once here,
// where a call written out would put a new one on the heap every time
// (16 B a call, a GC every few thousand transfers).
type boundCall struct {
	fn   uintptr
	args []uintptr
}

func (b boundCall) call() int32 {
	r, _, _ := purego.SyscallN(b.fn, b.args...)
	return int32(r)
}

// postCall and statusCall are the calls on one request; pollCall is
// getNotifs into one map (the target's loop, the initiator's last wait). Their arguments are C
// handles, never Go pointers.
func (c *capi) postCall(agent, req uintptr) boundCall {
	return boundCall{c.postXferReq, []uintptr{agent, req, 0}}
}

func (c *capi) statusCall(agent, req uintptr) boundCall {
	return boundCall{c.getXferStatus, []uintptr{agent, req}}
}

func (c *capi) pollCall(agent, m uintptr) boundCall {
	return boundCall{c.getNotifsFn, []uintptr{agent, m, 0}}
}

// notifsOf and notifAt are the target's reads after pollCall: one agent's
// count and its new messages. agent is a NUL-terminated name the caller
// keeps alive.
func (c *capi) notifsOf(m uintptr, agent *byte, n *uintptr) int32 {
	r, _, _ := purego.SyscallN(c.notifsSizeFn, m, uintptr(unsafe.Pointer(agent)), uintptr(unsafe.Pointer(n)))
	return int32(r)
}

func (c *capi) notifAt(m uintptr, agent *byte, i uintptr, data *unsafe.Pointer, n *uintptr) int32 {
	r, _, _ := purego.SyscallN(c.notifAtFn, m, uintptr(unsafe.Pointer(agent)), i,
		uintptr(unsafe.Pointer(data)), uintptr(unsafe.Pointer(n)))
	return int32(r)
}
