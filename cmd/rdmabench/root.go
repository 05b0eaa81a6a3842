package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/rdmabench/rdmabench/report/html"
)

// version is set at build time with -ldflags "-X main.version=…" (make
// build, the release); buildVersion falls back on the module version.
var version = "dev"

// buildVersion is the version to show: the ldflags one, else what `go
// install …@vX.Y.Z` recorded in the binary, else dev.
func buildVersion() string {
	if version != "dev" && version != "" {
		return version
	}
	info, _ := debug.ReadBuildInfo()
	return versionFrom(info)
}

func versionFrom(info *debug.BuildInfo) string {
	if info == nil || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return "dev"
	}
	return info.Main.Version
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use: "rdmabench",
		Example: `  rdmabench run loopback                                  # one host: the quick start
  rdmabench run kube-check --kubeconfig .work/kubeconfig  # the first run on a cluster (make kube-up)
  rdmabench compare --baseline auto results/ results/pd-disagg-20261125-020000`,
		Short: "Benchmark the RDMA fabric under LLM serving (prefill/decode, WideEP) from inside pods",
		Long: `rdmabench runs perftest, rping, nixlbench, nccl-tests, ucx_perftest and iperf3
between the pods (or processes) a scenario describes, and reports every result
against the NIC's line rate.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(), // --version, as people try first
	}
	root.SetVersionTemplate("rdmabench {{.Version}}\n")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	root.AddCommand(
		newVersionCmd(stdout),
		newPauseCmd(),
		newValidateCmd(stdout, stderr),
		newInitCmd(stdout, stderr),
		newSchemaCmd(stdout),
		newPlanCmd(stdout),
		newParseCmd(stdin, stdout),
		newRunCmd(stdout, stderr),
		newPreflightCmd(stdout, stderr),
		newEtcdCmd(stdout, stderr),
		newReportCmd(stdout, stderr),
		newCompareCmd(stdout, stderr),
		newHistoryCmd(stdout, stderr),
		newDiscoverCmd(stdout),
		newCleanCmd(stdout, stderr),
	)
	enforceUsageErrors(root)
	withCompletionExamples(root)
	return root
}

// withCompletionExamples gives cobra's completion command, and the one per
// shell under it, an Example like every other command's.
func withCompletionExamples(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = "  rdmabench completion bash > /etc/bash_completion.d/rdmabench"
		for _, sh := range c.Commands() {
			sh.Example = "  rdmabench completion " + sh.Name() + " > rdmabench-completion." + sh.Name()
		}
	}
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the rdmabench version, its Go toolchain and platform, and whether it draws charts",
		Example: "  rdmabench version",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			charts := "included (ECharts)"
			if !html.ChartsIncluded() {
				charts = "not included: built without `make assets`; HTML reports have their tables and a note where charts would be"
			}
			_, err := fmt.Fprintf(stdout, "rdmabench %s\ngo: %s\nplatform: %s/%s\ncharts: %s\n",
				buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, charts)
			return err
		},
	}
}
