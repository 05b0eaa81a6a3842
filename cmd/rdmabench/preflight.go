package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rdmabench/rdmabench/nic"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/report/text"
	"github.com/rdmabench/rdmabench/runner"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/preflight"
)

// preflightOptions are the flags and arguments of `rdmabench preflight`.
type preflightOptions struct {
	file    string
	output  string // table or json
	timeout time.Duration
	kube    kubeOptions

	stdout, stderr io.Writer
}

func newPreflightCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &preflightOptions{stdout: stdout, stderr: stderr}
	cmd := &cobra.Command{
		Use:               "preflight SCENARIO",
		ValidArgsFunction: completeScenario,
		Example: `  rdmabench preflight loopback
  rdmabench preflight pd-disagg.yaml --kubeconfig ~/.kube/config -o json`,
		Short: "Check every endpoint before a run (RDMA device, port, memlock, MTU, GID, GPUs …) and clean up",
		Long: `preflight provisions the scenario's endpoints, runs only the preflight
checks on each (rdma-device, port-active, link-layer, dev-infiniband, memlock,
ipc-lock, mtu-match, roce-gid, gpu-count, gpudirect, pcie-link: the ones its
tests need), prints them with the evidence read and the fix, and removes what
it created. run makes the same checks before its first test and skips the
tests a failing check dooms.

Exit codes: 0 every test the scenario means to run here can run (checks
passed or warned; a failure that only says why a test is skipped by design,
such as no RDMA device for loopback's requires: rdma tests, is its skip
reason), 1 some check failed that keeps a test from running, 2 bad scenario
or flags, 3 the endpoints could not be provisioned.

A failed check of a tool whose tests another check already skips (no RDMA
device, no GPU) is shown as skip: the reason is said once, by that check.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.file = args[0]
			return runPreflight(c.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "table or json (the report.json preflight section)")
	addPreflightTimeout(cmd.Flags(), &o.timeout)
	addKubeFlags(cmd.Flags(), &o.kube)
	return cmd
}

// addPreflightTimeout is --preflight-timeout, of run and preflight.
func addPreflightTimeout(fl *pflag.FlagSet, d *time.Duration) {
	fl.DurationVar(d, "preflight-timeout", preflight.DefaultTimeout,
		"bound on reading each endpoint's facts (one command per endpoint and container), and, when longer than 15s, on each reading of its counters for the path proof; raise it where starting a command in a pod is slow (emulated nodes, a distant API server)")
}

// preflightFailed is a failing check: exit 1, the table already says which.
type preflightFailed struct{}

func (preflightFailed) Error() string { return "a preflight check failed" }
func (preflightFailed) ExitCode() int { return exitShortfall }

func runPreflight(ctx context.Context, o *preflightOptions) error {
	if o.output != "table" && o.output != "json" {
		return usageError{fmt.Errorf("--output %q: want table or json", o.output)}
	}
	sc, err := loadScenario(o.file)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	runID := runner.NewRunID(time.Now())
	be, err := newBackend(sc, runID, o.kube, o.stderr)
	if err != nil {
		return err
	}
	// Every test is planned, so every endpoint is checked for what it needs.
	platform, err := backendPlatform(ctx, be)
	if err != nil {
		return err
	}
	// Planned as run plans it: a test set aside where there is no RDMA
	// device at all (requires: rdma) is skipped by design, its endpoints
	// still checked; where a device is there but unusable (its port down),
	// the test would run, and the check that stops it fails preflight.
	p, err := compilePlan(sc, plan.CompileOptions{HostGPUs: nic.CountGPUs, HasRDMA: hasRDMADevice(ctx, be), Platform: platform})
	if err != nil {
		return err
	}
	eps, err := be.Provision(ctx, p.Endpoints)
	defer cleanupBackend(be, o.stderr)
	if err != nil {
		return fmt.Errorf("provision endpoints on %s: %w", be.Name(), err)
	}
	res, _ := preflight.RunWith(ctx, be, p, sc, eps, preflight.Options{Platform: platform, Timeout: o.timeout})
	if err := ctx.Err(); err != nil {
		return err // interrupted: the facts read are partial (exit 130, not 1)
	}
	if o.output == "json" {
		enc := json.NewEncoder(o.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"preflight": res}); err != nil {
			return err
		}
	} else if err := text.WritePreflightTable(o.stdout, res); err != nil {
		return err
	}
	if preflight.Blocking(res, p, sc, eps, be, platform) {
		return silentError{preflightFailed{}}
	}
	return nil
}

// cleanupBackend removes what Provision created, on a fresh context.
func cleanupBackend(be backend.Backend, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := be.Cleanup(ctx); err != nil {
		fmt.Fprintf(stderr, "clean-up: %v\n", err)
	}
}

// hasRDMADevice says whether an endpoint has an RDMA device, usable or not:
// the backend's own test (an ACTIVE port), else any entry under
// /sys/class/infiniband where the endpoint runs (bounded).
func hasRDMADevice(ctx context.Context, be backend.Backend) func(endpoint.Endpoint) bool {
	usable := runner.BackendHasRDMA(ctx, be)
	return func(ep endpoint.Endpoint) bool {
		if usable(ep) {
			return true
		}
		c, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		out, err := be.Exec(c, ep, []string{"sh", "-c", "ls " + runner.SysClassInfiniband + " 2>/dev/null"})
		return err == nil && strings.TrimSpace(string(out)) != ""
	}
}
