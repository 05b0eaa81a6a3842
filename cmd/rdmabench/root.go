package main

import (
	"io"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "rdmabench",
		Short: "Benchmark the RDMA fabric under LLM serving (prefill/decode, WideEP) from inside pods",
		Long: `rdmabench runs perftest, rping, nixlbench, nccl-tests, ucx_perftest and iperf3
between the pods (or processes) a scenario describes, and reports every result
against the NIC's line rate.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version, // --version, as people try first
	}
	root.SetVersionTemplate("rdmabench {{.Version}}\n")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	root.AddCommand(
		newVersionCmd(stdout),
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
	return root
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the rdmabench version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := io.WriteString(stdout, "rdmabench "+version+"\n")
			return err
		},
	}
}
