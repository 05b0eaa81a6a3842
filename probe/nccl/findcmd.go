package nccl

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// ReportLibrary is the probe's --find: where NCCL is, by which rule, and
// its version, as key=value lines preflight reads (nccl=notfound and the
// places looked at when it cannot be loaded). It needs no GPU.
func ReportLibrary(ctx context.Context, lib *Library, w io.Writer) error {
	if lib == nil {
		l := FindNCCL(ctx, getenv)
		lib = &l
	}
	nc, err := loadNCCL(lib.Path)
	if err != nil {
		_, werr := fmt.Fprintf(w, "nccl=notfound\nnccl-error=%s\nlooked=%s\n", oneLine(err.Error()), strings.Join(lib.Looked, "; "))
		return werr
	}
	ver, _ := nc.version()
	_, err = fmt.Fprintf(w, "nccl=%s\nnccl-found-by=%s\nnccl-version=%s\n", lib.Path, lib.FoundBy, ver)
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
