package nccl

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// uniqueID is ncclUniqueId: 128 opaque bytes rank 0 makes and every rank
// passes to ncclCommInitRank by value.
type uniqueID struct{ Internal [128]byte }

// ncclAPI is the part of libnccl the probe uses: what nccl-tests and
// vLLM's pynccl call.
type ncclAPI struct {
	ncclGetVersion        func(v *int32) int32
	ncclGetUniqueId       func(id *uniqueID) int32
	ncclCommInitRank      func(comm *uintptr, nranks int32, id uniqueID, rank int32) int32
	ncclCommDestroy       func(comm uintptr) int32
	ncclCommGetAsyncError func(comm uintptr, err *int32) int32
	ncclGetErrorString    func(res int32) *byte
	ncclGetLastError      func(comm uintptr) *byte
	ncclAllReduce         func(send, recv uint64, count uintptr, dtype, op int32, comm, stream uintptr) int32
	ncclAllGather         func(send, recv uint64, count uintptr, dtype int32, comm, stream uintptr) int32
	ncclReduceScatter     func(send, recv uint64, count uintptr, dtype, op int32, comm, stream uintptr) int32
	ncclBroadcast         func(send, recv uint64, count uintptr, dtype, root int32, comm, stream uintptr) int32
	ncclSend              func(send uint64, count uintptr, dtype, peer int32, comm, stream uintptr) int32
	ncclRecv              func(recv uint64, count uintptr, dtype, peer int32, comm, stream uintptr) int32
	ncclGroupStart        func() int32
	ncclGroupEnd          func() int32
	// ncclAlltoAll is NCCL's own all-to-all (2.28 and later), which
	// nccl-tests calls where the library has it; nil before 2.28.
	ncclAlltoAll func(send, recv uint64, count uintptr, dtype int32, comm, stream uintptr) int32

	comm uintptr
}

func loadNCCL(path string) (*ncclAPI, error) {
	lib, err := openLib(path)
	if err != nil {
		return nil, err
	}
	n := &ncclAPI{}
	err = bind(lib, path, map[string]any{
		"ncclGetVersion": &n.ncclGetVersion, "ncclGetUniqueId": &n.ncclGetUniqueId,
		"ncclCommInitRank": &n.ncclCommInitRank, "ncclCommDestroy": &n.ncclCommDestroy,
		"ncclCommGetAsyncError": &n.ncclCommGetAsyncError, "ncclGetErrorString": &n.ncclGetErrorString,
		"ncclGetLastError": &n.ncclGetLastError,
		"ncclAllReduce":    &n.ncclAllReduce, "ncclAllGather": &n.ncclAllGather, "ncclReduceScatter": &n.ncclReduceScatter,
		"ncclBroadcast": &n.ncclBroadcast, "ncclSend": &n.ncclSend, "ncclRecv": &n.ncclRecv,
		"ncclGroupStart": &n.ncclGroupStart, "ncclGroupEnd": &n.ncclGroupEnd,
	})
	if err != nil {
		return nil, err
	}
	if _, err := purego.Dlsym(lib, "ncclAlltoAll"); err == nil {
		purego.RegisterLibFunc(&n.ncclAlltoAll, lib, "ncclAlltoAll")
	}
	return n, nil
}

// check turns an ncclResult_t into an error naming the call, with NCCL's
// own last error where it has one.
func (n *ncclAPI) check(call string, res int32) error {
	if res == 0 {
		return nil
	}
	msg := goString(n.ncclGetErrorString(res))
	if last := goString(n.ncclGetLastError(n.comm)); last != "" {
		msg += ": " + last
	}
	return fmt.Errorf("%s: NCCL error %d: %s", call, res, msg)
}

// version is NCCL's version code as a dotted string (22809 → 2.28.9) and
// the code itself.
func (n *ncclAPI) version() (string, int) {
	var v int32
	if n.ncclGetVersion(&v) != 0 {
		return "unknown", 0
	}
	return versionString(int(v)), int(v)
}

// versionString: codes from 2.9 on are major*10000 + minor*100 + patch;
// older ones major*1000 + minor*100 + patch.
func versionString(code int) string {
	if code >= 20900 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
}

// NCCL's enums (nccl.h).
const (
	ncclSum = 0
)

// dataType is an ncclDataType_t with its name (as nccl-tests -d spells
// it) and size.
type dataType struct {
	name string
	code int32
	size int
}

var dataTypes = []dataType{
	{"int8", 0, 1}, {"uint8", 1, 1}, {"int32", 2, 4}, {"uint32", 3, 4}, {"int64", 4, 8}, {"uint64", 5, 8},
	{"half", 6, 2}, {"float", 7, 4}, {"double", 8, 8}, {"bfloat16", 9, 2},
}

func lookupType(name string) (dataType, error) {
	for _, t := range dataTypes {
		if t.name == name {
			return t, nil
		}
	}
	var names []string
	for _, t := range dataTypes {
		names = append(names, t.name)
	}
	return dataType{}, fmt.Errorf("unknown data type %q (known: %v)", name, names)
}
