package nixlnative

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/probe/nixl"
	"github.com/rdmabench/rdmabench/probe/pyprobe"
)

// CAPIEnv names libnixl_capi.so where the image's python3 cannot say
// which NIXL it loads.
const CAPIEnv = "RDMABENCH_NIXL_CAPI"

// nixlLib is the NIXL the initiator loads: the very libnixl.so the image's
// nixl package loads, and the C API beside it, so that its plugins (found
// beside libnixl.so, or in NIXL_PLUGIN_DIR) and UCX are the serving ones.
type nixlLib struct {
	capi    string // libnixl_capi.so: a path, or the soname for the loader
	libnixl string // the libnixl.so python loaded, or ""
	version string // NIXL's, as its Python package says, or "unknown"
	foundBy string
}

// locateScript imports nixl as vLLM does and prints the libnixl.so it
// mapped, NIXL's C API beside it and NIXL's version (the scripts preflight
// reads them with, package nixl).
const locateScript = `
import os, sys
try:
    import nixl, nixl._api
except Exception as e:
    print("nixl-error=" + str(e).replace("\n", " ")); sys.exit(0)
` + nixl.CAPIPython + `
print("nixl-capi=" + capi_found)
` + nixl.VersionPython

// locate finds libnixl_capi.so: $RDMABENCH_NIXL_CAPI, else beside the
// libnixl.so the image's python3 loads with nixl (or in a sibling *.libs
// folder, as wheels lay libraries out), else the loader's where there is
// no python3 at all.
func locate(ctx context.Context) (nixlLib, error) {
	if p := os.Getenv(CAPIEnv); p != "" {
		return nixlLib{capi: p, version: "unknown", foundBy: CAPIEnv}, nil
	}
	py, _, looked := pyprobe.Python()
	if py == "" {
		return nixlLib{capi: "libnixl_capi.so", version: "unknown", foundBy: "the loader (no python3: " + strings.Join(looked, ", ") + ")"}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, py, "-c", locateScript)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nixlLib{}, fmt.Errorf("%s could not say which NIXL it loads: %v: %s", py, err, strings.TrimSpace(errb.String()))
	}
	fields := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			fields[k] = v
		}
	}
	if e, ok := fields["nixl-error"]; ok {
		return nixlLib{}, fmt.Errorf("%s cannot import nixl (%s): run with the python3 of an image that has NIXL's Python package, set %s, or %s to NIXL's libnixl_capi.so",
			py, e, pyprobe.PythonEnv, CAPIEnv)
	}
	lib := nixlLib{libnixl: fields["libnixl"], version: fields["nixl-version"], capi: fields["nixl-capi"]}
	switch {
	case lib.libnixl == "":
		// Not the loader's guess: another NIXL than python's would be measured.
		return lib, fmt.Errorf("%s imported nixl but mapped no libnixl.so: set %s to the libnixl_capi.so of the NIXL it uses", py, CAPIEnv)
	case lib.capi == "":
		return lib, fmt.Errorf("NIXL %s at %s has no libnixl_capi.so beside it (NIXL ≥ 1.0 installs it): set %s to it, or run the probe without --native",
			lib.version, filepath.Dir(lib.libnixl), CAPIEnv)
	}
	lib.foundBy = "beside " + py + "'s " + filepath.Base(lib.libnixl)
	return lib, nil
}
