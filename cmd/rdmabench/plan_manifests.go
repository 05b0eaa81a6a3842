package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rdmabench/rdmabench/nic"

	"github.com/rdmabench/rdmabench/runner"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// runPlanManifests prints every object `run` would create for a kube
// scenario, as YAML that kubectl apply --dry-run=client accepts (-n
// overrides the namespace, as for run).
func runPlanManifests(opts *planOptions, stdout io.Writer) error {
	for _, name := range []string{"schedule", "image", "results-claim", "storage"} {
		if opts.cron.cmd != nil && opts.cron.cmd.Flags().Changed(name) {
			return usageError{fmt.Errorf("--%s is for -o cronjob", name)}
		}
	}
	s, err := loadScenario(opts.file)
	if err != nil {
		return err
	}
	if s.Backend != scenarios.BackendKube {
		return usageError{fmt.Errorf("%s: -o manifests is for backend: kube (this scenario's backend is %s)", opts.file, s.Backend)}
	}
	p, err := plan.Compile(s, plan.CompileOptions{HostGPUs: nic.CountGPUs, Platform: scenarioPlatform(s)})
	if err != nil {
		return err
	}
	objs, err := kube.Manifests(s, p.Endpoints, kube.ManifestOptions{
		RunID: runner.NewRunID(time.Now()), Namespace: opts.cron.namespace, Etcd: p.NeedsEtcd, Platform: scenarioPlatform(s)})
	if err != nil {
		return usageError{err}
	}
	fmt.Fprintf(stdout, "# The objects `rdmabench run %s` creates (run id as an example; owner references to the\n# run's ConfigMap are set at run time). The namespace is created only when missing.\n", opts.file)
	return kube.WriteManifest(stdout, objs)
}
