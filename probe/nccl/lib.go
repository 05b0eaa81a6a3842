package nccl

import (
	"unsafe"

	"github.com/rdmabench/rdmabench/probe/dl"
)

// openLib, bind and goString are package dl's, under the names this
// package's calls use.
func openLib(name string) (uintptr, error)                       { return dl.Open(name) }
func bind(lib uintptr, libName string, fns map[string]any) error { return dl.Bind(lib, libName, fns) }
func goString(p *byte) string                                    { return dl.GoString(p) }

// ptr is a byte slice's first element, for a copy to or from the GPU.
func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
