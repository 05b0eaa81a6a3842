// Package nixl runs rdmabench's NIXL probe (rdmabench_nixl.py, embedded):
// the KV-cache transfer of disaggregated serving, driven through NIXL's
// Python API as vLLM's NixlConnector drives it, with the python3 and the
// nixl package of the image that serves. The probe is Python because
// NIXL's Python package is what vLLM loads; this package finds that
// python3, bounds the run and ends it cleanly on a signal (package pyprobe,
// shared with the DeepEP probe).
package nixl

import (
	_ "embed"

	"github.com/rdmabench/rdmabench/probe/pyprobe"
)

// Program is the probe's binary, as scenarios and parsers name it.
const Program = "rdmabench-nixl"

// NativeHost and NativeSubcommand start the native initiator (package
// probe/nixlnative): it loads NIXL's C API with purego, so it is built into
// rdmabench-nccl, rdmabench's one program that loads libraries, and this
// program stays static.
const (
	NativeHost       = "rdmabench-nccl"
	NativeSubcommand = "nixl-initiator"
)

// Script is the probe itself.
//
//go:embed rdmabench_nixl.py
var Script []byte

// PythonEnv names the python3 to use where PATH's is not the serving one.
const PythonEnv = pyprobe.PythonEnv

// VersionPython prints nixl-version=: NIXL's pip distribution's version,
// else nixl.__version__, else unknown (nixl imported, os and sys too).
const VersionPython = `
v = getattr(nixl, "__version__", "")
try:
    from importlib import metadata
    for d in ("nixl", "nixl-cu13", "nixl-cu12", "nixl_cu13", "nixl_cu12"):
        try:
            v = metadata.version(d); break
        except Exception:
            pass
except ImportError:
    pass
print("nixl-version=" + (v or "unknown"))
`

// CAPIPython prints libnixl=, the libnixl.so that importing nixl mapped
// (or a wheel's libnixl-<8 hex>.so), and leaves capi_found: NIXL's C API
// (--native) beside it, or in a sibling *.libs folder as wheels lay
// libraries out; "" where there is none.
const CAPIPython = `
import glob, re
libnixl, capi_found = "", ""
try:
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if re.match(r"libnixl(-[0-9a-f]{8})?\.so", os.path.basename(p)):
                libnixl = p; break
except OSError:
    pass
print("libnixl=" + libnixl)
if libnixl:
    d = os.path.dirname(libnixl)
    found = sorted(glob.glob(os.path.join(d, "libnixl_capi*.so*")) + glob.glob(os.path.join(d, "..", "*.libs", "libnixl_capi*.so*"))
                   + glob.glob(os.path.join(d, "..", ".*.libs", "libnixl_capi*.so*")))
    capi_found = os.path.normpath(found[0]) if found else ""
`

// findScript prints what preflight needs to know, one key=value a line:
// the interpreter, whether it imports nixl, NIXL's version, plugins and C
// API, and torch.
const findScript = `
import os, sys
print("python-version=" + sys.version.split()[0])
try:
    import nixl, nixl._api as api
except Exception as e:
    print("nixl=notfound")
    print("nixl-error=" + str(e).replace("\n", " "))
    sys.exit(0)
print("nixl=" + os.path.dirname(nixl.__file__))
` + VersionPython + `
try:
    a = api.nixl_agent("rdmabench-find", api.nixl_agent_config(False, False, 0, backends=[]))
    print("plugins=" + ",".join(sorted(a.get_plugin_list())))
except Exception as e:
    print("plugins=error:" + str(e).replace("\n", " "))
` + CAPIPython + `
# $RDMABENCH_NIXL_CAPI first, as --native takes it (a soname: the loader's to find).
capi = os.environ.get("RDMABENCH_NIXL_CAPI", "")
if capi:
    capi = capi if os.path.exists(capi) or "/" not in capi else ""
else:
    capi = capi_found
print("nixl-capi=" + (capi or "notfound"))
try:
    import torch
    print("torch=" + torch.__version__ + " cuda=" + str(torch.version.cuda))
except Exception:
    print("torch=none")
`
