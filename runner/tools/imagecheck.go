package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/scenarios"
)

// The image checks: before any test, each endpoint is asked whether what
// its tests need is in its image: the binaries, and for the GPU tools the
// parts a present binary does not prove (the NIXL plugin of the backend
// under test, UCX's transports, perftest's CUDA, nccl-tests' NCCL). A
// failing check skips only the tests that need it, with the fix.

// BinaryOf is the binary a test of tool runs (nccl: its collective's).
func BinaryOf(t *scenarios.Test, tool string) string {
	spec, ok := Lookup(tool)
	switch {
	case !ok:
		return tool
	case spec.program != nil:
		return spec.program(t)
	case len(spec.Programs) > 0:
		return spec.Programs[0]
	}
	return tool
}

// BinaryProbe is the check that bin is on the endpoint's PATH.
func BinaryProbe(bin, install string) Probe {
	return Probe{
		ID:     "binary-" + bin,
		Script: fmt.Sprintf("command -v %s || echo missing", shellWord(bin)),
		Judge: func(out string) (ProbeStatus, string, string) {
			path := strings.TrimSpace(out)
			if path == "" || path == "missing" {
				return ProbeFail, bin + " is not on PATH", install
			}
			return ProbePass, bin + " at " + path, ""
		},
	}
}

// nixlPluginScript finds NIXL's plugin folder as NIXL does
// (nixl_plugin_manager.cpp getPluginDir: NIXL_PLUGIN_DIR, else "plugins"
// beside the libnixl.so nixlbench loads) and lists what it holds.
const nixlPluginScript = `b=$(command -v nixlbench) || { echo "nixlbench=missing"; exit 0; }
lib=$(ldd "$b" 2>/dev/null | sed -n 's/.*libnixl\.so[^ ]* => \([^ ]*\) .*/\1/p' | head -n 1)
d=${NIXL_PLUGIN_DIR:-}
if [ -z "$d" ] && [ -n "$lib" ]; then d=$(dirname "$lib")/plugins; fi
echo "dir=$d"
for f in "$d"/libplugin_*.so; do [ -f "$f" ] || continue; n=${f##*/libplugin_}; echo "has=${n%.so}"; done
f="$d/libplugin_BACKEND.so"
if [ -f "$f" ]; then echo "plugin=$f"; ldd "$f" 2>/dev/null | sed -n 's/^[[:space:]]*\([^ ]*\) => not found.*/unresolved=\1/p'; fi`

// NixlPluginProbe checks that the NIXL plugin of backend is there and
// that the libraries it needs resolve (UCCL's needs its p2p library).
func NixlPluginProbe(backendName string) Probe {
	b := strings.ToUpper(backendName)
	return Probe{
		ID:     "nixl-plugin-" + b,
		Script: strings.ReplaceAll(nixlPluginScript, "BACKEND", b), // not Sprintf: the script has its own %
		Judge: func(out string) (ProbeStatus, string, string) {
			dir, plugin := probeField(out, "dir"), probeField(out, "plugin")
			has := probeFields(out, "has")
			unresolved := probeFields(out, "unresolved")
			fix := "use an image whose NIXL was built with the " + b + " plugin (NIXL's nixlbench container; " + b + "'s library present), or point NIXL_PLUGIN_DIR at its plugins"
			switch {
			case probeField(out, "nixlbench") == "missing":
				return ProbeFail, "nixlbench is not on PATH", installNixl
			case dir == "":
				return ProbeUnknown, "NIXL's plugin folder is unknown (no NIXL_PLUGIN_DIR, libnixl.so not found by ldd)", ""
			case plugin != "" && len(unresolved) > 0:
				return ProbeFail, fmt.Sprintf("%s cannot load: %s not found", plugin, strings.Join(unresolved, ", ")), fix
			case plugin != "":
				return ProbePass, "NIXL plugin " + b + " at " + plugin, ""
			case len(has) == 0:
				return ProbeUnknown, "no plugin in " + dir + " (NIXL may have them built in)", ""
			}
			return ProbeFail, fmt.Sprintf("no %s plugin in %s (it has %s)", b, dir, strings.Join(has, ", ")), fix
		},
	}
}

// ucxTransportsScript lists UCX's transports as ucx_info sees them (the
// ucx_info beside nixlbench first: the UCX NIXL ships with).
const ucxTransportsScript = `u=""
if b=$(command -v nixlbench); then [ -x "$(dirname "$b")/ucx_info" ] && u="$(dirname "$b")/ucx_info"; fi
[ -n "$u" ] || u=$(command -v ucx_info) || { echo "ucx_info=missing"; exit 0; }
echo "ucx_info=$u"
if d=$("$u" -d 2>&1); then
  printf '%s\n' "$d" | sed -n 's/^#[[:space:]]*Transport:[[:space:]]*/tl=/p' | sort -u
else
  echo "ucx_info_error=$(printf '%s' "$d" | grep -v '^[[:space:]]*$' | head -n 1)"
fi
"$u" -b 2>/dev/null | sed -n 's/^#define uct_MODULES[[:space:]]*"\(.*\)"/\1/p' | tr ':' '\n' | sed -n 's/^\(..*\)/module=\1/p'
# Where UCX loads its modules from: ucx/ beside libucs, and UCX_MODULE_DIR
# as well (it adds a folder; it does not replace the first).
for d in "$(ldd "$u" 2>/dev/null | sed -n 's/.*libucs\.so[^ ]* => \([^ ]*\)\/libucs\.so.*/\1\/ucx/p' | head -n 1)" "${UCX_MODULE_DIR:-}"; do
  if [ -z "$d" ] || [ ! -d "$d" ]; then continue; fi
  echo "moddir=$d"
  for f in "$d"/libuct_*.so*; do [ -e "$f" ] && echo "modfile=${f##*/}"; done
done
for g in /dev/nvidia0 /dev/nvidia1; do [ -e "$g" ] && { echo "gpu=$g"; break; }; done
for r in /sys/class/infiniband/*; do [ -e "$r" ] && { echo "rdmadev=${r##*/}"; break; }; done
true`

// UCX transport needs a test can have.
const (
	UCXNeedsCUDA = "cuda" // GPU memory: cuda_copy
	UCXNeedsRDMA = "rdma" // an RDMA NIC: rc, dc or ud over verbs or mlx5
)

var ucxNeedTLs = map[string][]string{
	UCXNeedsCUDA: {"cuda_copy"},
	UCXNeedsRDMA: {"rc_verbs", "rc_mlx5", "dc_mlx5", "ud_verbs", "ud_mlx5"},
}

// ucxNeedModule is the UCT module (ucx_info -b's uct_MODULES) that holds
// a need's transports: ucx_info -d lists a transport only where its
// device is present, so a UCX built with it may list none here.
var ucxNeedModule = map[string]string{UCXNeedsCUDA: "cuda", UCXNeedsRDMA: "ib"}

// ucxNeedDevice is the probe's field that says a need's device is present.
var ucxNeedDevice = map[string]string{UCXNeedsCUDA: "gpu", UCXNeedsRDMA: "rdmadev"}

// UCXTransportProbe checks that UCX offers a transport of the need.
func UCXTransportProbe(need string) Probe {
	want := ucxNeedTLs[need]
	return Probe{
		ID:     "ucx-transports-" + need,
		Script: ucxTransportsScript,
		Judge: func(out string) (ProbeStatus, string, string) {
			if probeField(out, "ucx_info") == "missing" {
				return ProbeUnknown, "ucx_info is not on PATH: UCX's transports cannot be listed", ""
			}
			if e := probeField(out, "ucx_info_error"); e != "" {
				// ucx_info itself did not run: no word on any module.
				return ProbeFail, probeField(out, "ucx_info") + " -d failed: " + e,
					"make UCX's libraries loadable where the tools run (LD_LIBRARY_PATH to the image's UCX, as its nixlbench needs too)"
			}
			tls := probeFields(out, "tl")
			for _, tl := range tls {
				for _, w := range want {
					if tl == w {
						return ProbePass, "UCX has " + tl, ""
					}
				}
			}
			module := ucxNeedModule[need]
			if slices.Contains(probeFields(out, "module"), module) {
				// Built with the module: its library must be where UCX
				// loads modules from, and where the device is present
				// UCX must list its transports (else the module failed
				// to load: a missing libcuda, libibverbs …).
				dir := strings.Join(probeFields(out, "moddir"), " and ")
				files := probeFields(out, "modfile")
				if dir != "" && !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, "libuct_"+module+".so") }) {
					return ProbeFail, fmt.Sprintf("UCX was built with its %s module but %s has no libuct_%s.so (has %s)", module, dir, module, strings.Join(files, ", ")),
						"the image's UCX is incomplete: install its " + module + " module (libuct_" + module + ".so) beside the others, or unset a UCX_MODULE_DIR that points elsewhere"
				}
				if dev := probeField(out, ucxNeedDevice[need]); dev != "" {
					return ProbeFail, fmt.Sprintf("UCX has its %s module but lists none of %s although %s is present (has %s): the module does not load",
							module, strings.Join(want, "/"), dev, strings.Join(tls, ", ")),
						"run `UCX_LOG_LEVEL=debug ucx_info -d` in the pod to see why libuct_" + module + ".so does not load (a missing libcuda or libibverbs, a driver mismatch)"
				}
				return ProbePass, fmt.Sprintf("UCX was built with its %s module (no device of it seen here: has %s)", module, strings.Join(tls, ", ")), ""
			}
			fix := "use a UCX built with CUDA (--with-cuda), as NIXL's and vLLM's images have it"
			if need == UCXNeedsRDMA {
				fix = "use a UCX built with verbs (--with-verbs; rdma-core in the image) and give the pod the RDMA device"
			}
			return ProbeFail, fmt.Sprintf("UCX offers no %s (has %s)", strings.Join(want, "/"), strings.Join(tls, ", ")), fix
		},
	}
}

// PerftestCUDAProbe checks that a perftest binary offers --use_cuda (a
// distribution's perftest is built without it).
func PerftestCUDAProbe(bin string) Probe {
	return Probe{
		ID: "perftest-cuda-" + bin,
		Script: fmt.Sprintf(`command -v %[1]s >/dev/null || { echo "cuda=missing"; exit 0; }
if %[1]s --help 2>&1 | grep -q -- '--use_cuda'; then echo "cuda=yes"; else echo "cuda=no"; fi`, shellWord(bin)),
		Judge: func(out string) (ProbeStatus, string, string) {
			switch probeField(out, "cuda") {
			case "yes":
				return ProbePass, bin + " offers --use_cuda", ""
			case "no":
				return ProbeFail, bin + " was built without CUDA (no --use_cuda in its help)",
					"use a perftest built with CUDA (./configure CUDA_H_PATH=…/cuda.h) in the image"
			case "missing":
				return ProbeFail, bin + " is not on PATH", installPerftest
			}
			return ProbeUnknown, "the probe printed nothing it knows: " + strings.TrimSpace(out), ""
		},
	}
}

// NCCLLoadsProbe checks that an nccl-tests binary resolves libnccl.
func NCCLLoadsProbe(bin string) Probe {
	return Probe{
		ID: "nccl-loads-" + bin,
		Script: fmt.Sprintf(`p=$(command -v %s) || { echo "nccl=missing"; exit 0; }
l=$(ldd "$p" 2>/dev/null | grep 'libnccl') || { echo "nccl=static"; exit 0; }
case "$l" in *"not found"*) echo "nccl=notfound" ;; *) echo "nccl=$(echo "$l" | sed -n 's/.*=> \([^ ]*\).*/\1/p')" ;; esac`, shellWord(bin)),
		Judge: func(out string) (ProbeStatus, string, string) {
			switch v := probeField(out, "nccl"); v {
			case "missing":
				return ProbeFail, bin + " is not on PATH", installNCCL
			case "notfound":
				return ProbeFail, bin + " cannot load libnccl (ldd: not found)",
					"put NCCL's lib folder on LD_LIBRARY_PATH (the pod's env), or use an image whose nccl-tests find NCCL"
			case "static":
				return ProbePass, bin + " does not link libnccl dynamically", ""
			case "":
				return ProbeUnknown, "the probe printed nothing it knows: " + strings.TrimSpace(out), ""
			default:
				return ProbePass, bin + " loads " + v, ""
			}
		},
	}
}

// probeFields are every value of "key=value" lines of a probe's output.
func probeFields(out, key string) []string {
	var vs []string
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+"="); ok && v != "" {
			vs = append(vs, v)
		}
	}
	return vs
}

// shellWord quotes a word for sh (binary names are plain; a name with
// anything else is quoted rather than trusted).
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
