package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmabench/rdmabench/runner/backend/kube"
)

type cleanOptions struct {
	kube    kubeOptions
	runID   string
	all     bool
	timeout time.Duration
	stdout  io.Writer
}

func newCleanCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &cleanOptions{stdout: stdout}
	cmd := &cobra.Command{
		Use:   "clean (--run ID | --all) [-n NAMESPACE]",
		Short: "Remove the pods and objects that runs left on the cluster (--keep, a crash)",
		Long: `clean finds what rdmabench runs created on the cluster by their labels
(rdmabench.io/run, app.kubernetes.io/managed-by=rdmabench) and deletes it:
pods, the run's ConfigMap, and namespaces rdmabench itself created for the
run. A namespace rdmabench did not create is never deleted.`,
		Example: `  rdmabench clean --run 20261124-061500-ab12 -n rdmabench
  rdmabench clean --all              # every run, every namespace`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runClean(c.Context(), o) },
	}
	fl := cmd.Flags()
	addKubeFlags(fl, &o.kube)
	fl.StringVar(&o.runID, "run", "", "the run whose objects to remove (its id is in report.json and in the pods' rdmabench.io/run label)")
	fl.BoolVar(&o.all, "all", false, "remove the objects of every run")
	fl.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound the clean-up, waiting until the pods are gone included")
	return cmd
}

func runClean(ctx context.Context, o *cleanOptions) error {
	if (o.runID == "") == !o.all {
		return usageError{fmt.Errorf("say which runs to clean: --run ID, or --all")}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	_, client, err := o.kube.connect()
	if err != nil {
		return err
	}
	n, err := kube.Clean(ctx, client, kube.CleanOptions{Namespace: o.kube.namespace, RunID: o.runID, Wait: o.timeout, DeleteNamespaces: true})
	where := "every namespace"
	if o.kube.namespace != "" {
		where = "namespace " + o.kube.namespace
	}
	fmt.Fprintf(o.stdout, "removed %d pod(s) in %s\n", n, where)
	return err
}
