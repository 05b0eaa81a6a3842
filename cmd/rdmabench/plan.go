package main

import (
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/nic"

	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/spf13/cobra"
)

// planOptions are the flags of `rdmabench plan`.
type planOptions struct {
	file   string
	output string // summary | table | json | yaml | manifests | cronjob
	cron   cronJobFlags
	seed   sampleSeed
	quick  bool
}

// newPlanCmd shows what a run would do, without touching anything: the
// endpoints, the rounds, and every command line each job will run.
func newPlanCmd(stdout io.Writer) *cobra.Command {
	opts := &planOptions{}
	cmd := &cobra.Command{
		Use:               "plan FILE",
		ValidArgsFunction: completeScenario,
		Short:             "Show the endpoints, rounds and exact command lines a scenario will run",
		Long: `plan compiles a scenario into the plan a run would execute and prints it.
Nothing is started.

By default (-o table, as for run) it prints a summary: the endpoints and how
they share nodes, the rounds, jobs and legs (per test and in all) and the
estimated time, from the tests' own durations and the harness's measured
overhead per leg.

-o commands prints every leg's exact commands with their environment, port and
readiness signal, round by round (jobs of a round run at the same time);
-o json the plan as a run saves it in plan.json. Both stream: the rounds are
built as they are written, so an all-to-all over thousands of endpoints
prints without holding its millions of legs. Placeholders such as
${addr:NAME}, ${etcd}, ${run} and ${out} are filled in at run time.

-o cronjob prints instead what runs the scenario on a schedule in the
cluster (kube backend): a ServiceAccount with the least-privilege Role and
RoleBinding, a PersistentVolumeClaim for the results, a ConfigMap holding the
scenario and a CronJob whose Job runs it and compares it with the automatic
baseline; the Job fails when the run or the comparison does.`,
		Example: `  rdmabench plan scenarios/pd-disagg.yaml
  rdmabench plan scenarios/pd-disagg.yaml -o commands
  rdmabench plan scenarios/wideep.yaml -o json
  rdmabench plan scenarios/pd-disagg.yaml -o cronjob --image registry.example.com/rdmabench:v1 | kubectl apply -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.file = args[0]
			return runPlan(opts, stdout)
		},
	}
	cmd.Flags().StringVarP(&opts.output, "output", "o", "table", "output format: table (the summary, as run's), commands (every leg's command lines), json, yaml, manifests (kube: the objects run creates) or cronjob")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "commands", "json", "yaml", "manifests", "cronjob"}, cobra.ShellCompDirectiveNoFileComp))
	opts.cron.register(cmd)
	opts.seed.register(cmd.Flags())
	cmd.Flags().BoolVar(&opts.quick, "quick", false, "plan the quick profile: 1 repetition, fewer sizes, short durations (a first look)")
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
	profile := quickProfile(s, opts.quick)
	p, err := plan.Compile(s, plan.CompileOptions{HostGPUs: nic.CountGPUs, Platform: scenarioPlatform(s), SampleSeed: opts.seed.value(), Profile: profile})
	if err != nil {
		return err
	}
	return write(stdout, p)
}

func planWriter(format string) (func(io.Writer, *plan.Plan) error, error) {
	switch format {
	case "table", "summary", "":
		return plan.WriteSummary, nil
	case "commands":
		return plan.WriteTable, nil
	case "json":
		return plan.WriteJSON, nil
	case "yaml":
		return plan.WriteYAML, nil
	}
	return nil, usageError{fmt.Errorf("unknown output format %q: use table (the summary), commands, json, yaml, manifests or cronjob", format)}
}
