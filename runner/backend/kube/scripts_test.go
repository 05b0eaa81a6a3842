package kube

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/shelltest"
)

// The scripts the kube backend runs in pods, and the nightly CronJob's,
// pass shellcheck as sh.
func TestScriptsPassShellcheck(t *testing.T) {
	shelltest.Check(t, "CronJobScript", CronJobScript)
	shelltest.Check(t, "etcdScript", etcdScript(etcdPort))
	shelltest.Check(t, "bundleCopy", bundleCopy)
	shelltest.Check(t, "bundlePath", bundlePath)
	shelltest.Check(t, "hintsScript", hintsScript)
}
