package main

import (
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/spf13/cobra"
)

// planOptions are the flags of `rdmabench plan`.
type planOptions struct {
	file   string
	output string // table | json | yaml | cronjob
	cron   cronJobFlags
}

// newPlanCmd shows what a run would do, without touching anything: the
// endpoints, the rounds, and every command line each job will run.
func newPlanCmd(stdout io.Writer) *cobra.Command {
	opts := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Show the endpoints, rounds and exact command lines a scenario will run",
		Long: `plan compiles a scenario into the plan a run would execute and prints it:
the endpoints (pods or processes), the rounds of jobs (jobs of a round run at
the same time), and for every leg the exact commands with their environment,
port and readiness signal. Nothing is started. Placeholders such as
${addr:NAME}, ${etcd}, ${run} and ${out} are filled in at run time.

-o cronjob prints instead what runs the scenario on a schedule in the
cluster (kube backend): a ServiceAccount with the least-privilege Role and
RoleBinding, a PersistentVolumeClaim for the results, a ConfigMap holding the
scenario and a CronJob whose Job runs it and compares it with the automatic
baseline; the Job fails when the run or the comparison does.`,
		Example: `  rdmabench plan scenarios/pd-disagg.yaml
  rdmabench plan scenarios/wideep.yaml -o json
  rdmabench plan scenarios/pd-disagg.yaml -o cronjob --image registry.example.com/rdmabench:v1 | kubectl apply -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.file = args[0]
			return runPlan(opts, stdout)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table, json, yaml, manifests (kube: the objects run creates) or cronjob")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json", "yaml", "manifests", "cronjob"}, cobra.ShellCompDirectiveNoFileComp))
	opts.cron.register(cmd)
	return cmd
}

func runPlan(opts *planOptions, stdout io.Writer) error {
	if opts.output == "cronjob" {
		return runPlanCronJob(opts, stdout)
	}
	if opts.output == "manifests" {
		return runPlanManifests(opts, stdout)
	}
	if err := opts.cron.onlyWithCronJob(); err != nil {
		return err
	}
	write, err := planWriter(opts.output)
	if err != nil {
		return err
	}
	s, err := loadScenario(opts.file)
	if err != nil {
		return err
	}
	p, err := plan.Compile(s, plan.CompileOptions{Platform: scenarioPlatform(s)})
	if err != nil {
		return err
	}
	return write(stdout, p)
}

func planWriter(format string) (func(io.Writer, *plan.Plan) error, error) {
	switch format {
	case "table", "":
		return plan.WriteTable, nil
	case "json":
		return plan.WriteJSON, nil
	case "yaml":
		return plan.WriteYAML, nil
	}
	return nil, usageError{fmt.Errorf("unknown output format %q: use table, json, yaml, manifests or cronjob", format)}
}
