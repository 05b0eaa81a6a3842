package main

import (
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/nic"

	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/spf13/cobra"
)

// cronJobFlags are the flags of `plan -o cronjob`.
type cronJobFlags struct {
	cmd          *cobra.Command
	schedule     string
	image        string
	namespace    string // empty: the scenario's cluster.namespace
	resultsClaim string
	storage      string
	storageClass string
	timeZone     string
	push         string
}

func (f *cronJobFlags) register(cmd *cobra.Command) {
	f.cmd = cmd
	fl := cmd.Flags()
	fl.StringVar(&f.schedule, "schedule", "0 2 * * *", "-o cronjob: when to run, in cron syntax (in --time-zone, else the controller's time zone)")
	fl.StringVar(&f.image, "image", "", "-o cronjob: an image with rdmabench on PATH and /bin/sh (default quay.io/rdmabench/tools:VERSION, the tools image)")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "-o cronjob, -o manifests: where the run's objects go (default the scenario's cluster.namespace)")
	fl.StringVar(&f.resultsClaim, "results-claim", "rdmabench-results", "-o cronjob: the PersistentVolumeClaim that keeps every run")
	fl.StringVar(&f.storage, "storage", "10Gi", "-o cronjob: the size the results claim requests")
	fl.StringVar(&f.storageClass, "storage-class", "", "-o cronjob: the results claim's StorageClass (default the cluster's default class)")
	fl.StringVar(&f.timeZone, "time-zone", "", "-o cronjob: the IANA time zone of --schedule, e.g. Europe/Paris (default the controller's)")
	fl.StringVar(&f.push, "push", "", "-o cronjob: a Prometheus Pushgateway URL each nightly run pushes its figures and compare its verdicts to (run --push, compare --push)")
}

// onlyWithCronJob refuses the cronjob flags with another output, where
// they would be silently ignored.
func (f *cronJobFlags) onlyWithCronJob() error {
	for _, name := range []string{"schedule", "image", "namespace", "results-claim", "storage", "storage-class", "time-zone", "push"} {
		if f.cmd != nil && f.cmd.Flags().Changed(name) {
			return usageError{fmt.Errorf("--%s is for -o cronjob", name)}
		}
	}
	return nil
}

// runPlanCronJob prints the manifest that runs the scenario nightly in
// the cluster. The scenario is compiled first, so a scenario that cannot
// run never becomes a CronJob.
func runPlanCronJob(opts *planOptions, stdout io.Writer) error {
	s, err := loadScenario(opts.file)
	if err != nil {
		return err
	}
	if s.Backend != scenarios.BackendKube {
		return usageError{fmt.Errorf("%s: -o cronjob runs the scenario in the cluster and needs backend: kube (this one is %s)", opts.file, s.Backend)}
	}
	if _, err := plan.Compile(s, plan.CompileOptions{HostGPUs: nic.CountGPUs}); err != nil {
		return err
	}
	data, err := scenarioData(s)
	if err != nil {
		return err
	}
	f := opts.cron
	ns := f.namespace
	if ns == "" && s.Cluster != nil {
		ns = s.Cluster.Namespace
	}
	if ns == "" {
		ns = "rdmabench"
	}
	image := f.image
	if image == "" {
		image = "quay.io/rdmabench/tools:" + imageTag()
	}
	objs, err := kube.CronJob(kube.CronJobOptions{
		Scenario: s.Metadata.Name, ScenarioYAML: data, Namespace: ns, Schedule: f.schedule,
		Image: image, ResultsClaim: f.resultsClaim, Storage: f.storage,
		StorageClass: f.storageClass, TimeZone: f.timeZone, PushURL: f.push,
	})
	if err != nil {
		return usageError{err}
	}
	fmt.Fprint(stdout, imageNote(image, f.image != ""))
	return kube.WriteManifest(stdout, objs)
}

// imageNote is the comment at the head of the manifest that says what the
// CronJob's image is: the name alone does not say whether it exists.
func imageNote(image string, given bool) string {
	if given {
		return fmt.Sprintf("# image %s: given with --image; it must hold rdmabench on PATH and /bin/sh.\n", image)
	}
	why := "this binary's version"
	if imageTag() == "latest" {
		why = "latest, as this is a development build without a version"
	}
	return fmt.Sprintf(`# image %s: the tools image (images/tools: rdmabench, perftest, rping, ucx_perftest,
# iperf3, Open MPI), tagged with %s. The release workflow publishes it on a
# version tag; else build it with `+"`make image`"+` and push it to a registry the cluster
# pulls from, and name it with --image REGISTRY/NAME:TAG.
`, image, why)
}

// imageTag is the tag of the default image: this binary's version, or
// latest for a development build.
func imageTag() string {
	if v := buildVersion(); v != "dev" {
		return v
	}
	return "latest"
}
