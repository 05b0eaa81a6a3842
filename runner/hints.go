package runner

import "github.com/rdmabench/rdmabench/runner/tools"

// InstallHint says how to install a missing binary: the tool table's hint
// (runner/tools), else a generic one. A variable so tests can swap it.
var InstallHint = func(binary string) string {
	if h := tools.InstallHint(binary); h != "" {
		return h
	}
	return "install it and make sure it is on PATH"
}
