package tools

import (
	"slices"
	"strings"
)

// nccl-tests learnt -J (--output_file, the JSON result) in 2.17.3. An older
// binary given -J prints "invalid option" and its usage, runs nothing, and
// exits 0. Its usage (-h, read before MPI and CUDA start) lists
// --output_file when it has it: the runner asks, once per endpoint and
// binary, and drops -J where it is missing; the text output, which the
// parser reads in every generation, still carries every figure.

// NCCLJSONScript prints "json=yes" when bin's usage names --output_file,
// "json=no" when it does not, "json=missing" when bin is not on PATH.
func NCCLJSONScript(bin string) string {
	b := shellWord(bin)
	return `command -v ` + b + ` >/dev/null 2>&1 || { echo json=missing; exit 0; }
h=$(` + b + ` -h 2>&1 </dev/null | head -c 65536)
case "$h" in *output_file*) echo json=yes;; *) echo json=no;; esac`
}

// NCCLHasJSON reads NCCLJSONScript's output: false only when the binary
// answered and does not know -J.
func NCCLHasJSON(out string) bool {
	return probeField(out, "json") != "no"
}

// NCCLBinaryOf is the nccl-tests binary of a command (after mpirun's
// options), "" when it runs none.
func NCCLBinaryOf(argv []string) string {
	for _, w := range argv {
		if base := w[strings.LastIndex(w, "/")+1:]; strings.HasSuffix(base, "_perf") {
			return w
		}
	}
	return ""
}

// DropJSON is argv without nccl-tests' -J FILE (the text output is parsed).
func DropJSON(argv []string) []string {
	bin := slices.IndexFunc(argv, func(w string) bool { return w == NCCLBinaryOf(argv) })
	if bin < 0 {
		return argv
	}
	out := slices.Clone(argv[:bin+1])
	for i := bin + 1; i < len(argv); i++ {
		if (argv[i] == "-J" || argv[i] == "--output_file") && i+1 < len(argv) {
			i++
			continue
		}
		if strings.HasPrefix(argv[i], "--output_file=") {
			continue
		}
		out = append(out, argv[i])
	}
	return out
}
