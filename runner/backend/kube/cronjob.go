package kube

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the time zone is checked alike on hosts without a zoneinfo database

	"github.com/rdmabench/rdmabench/exitcode"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Where the scheduled container finds the scenario and keeps the runs.
const (
	ScenarioMount = "/scenario"
	ResultsMount  = "/results"
)

// CronJobOptions describe a nightly schedule of one scenario in a cluster.
type CronJobOptions struct {
	Scenario     string // metadata.name
	ScenarioYAML []byte // the scenario file, verbatim (its hash ties runs to baselines)
	Namespace    string // where the CronJob runs and the benchmark pods go
	Schedule     string // cron syntax, in the controller's time zone
	Image        string // an image with rdmabench on PATH and /bin/sh
	ResultsClaim string // the PersistentVolumeClaim holding every run
	Storage      string // its size request
	StorageClass string // its storageClassName; "" leaves the cluster's default
	TimeZone     string // the schedule's IANA time zone ("Europe/Paris"); "" is the controller's
	// PushURL is a Prometheus Pushgateway each run pushes its figures to
	// (run --push), through the PUSHGATEWAY_URL the script reads; "" pushes nothing.
	PushURL string
}

// CronJob is the set of objects that runs a scenario on a schedule,
// in the order to apply them: ServiceAccount, Role (Rules), RoleBinding,
// the results PersistentVolumeClaim, the scenario ConfigMap and the
// CronJob. The Job's container runs CronJobScript.
func CronJob(o CronJobOptions) ([]runtime.Object, error) {
	storage, err := o.check()
	if err != nil {
		return nil, err
	}
	name := "rdmabench-" + o.Scenario
	labels := map[string]string{"app.kubernetes.io/name": "rdmabench", "rdmabench.io/scenario": o.Scenario}
	meta := func(n string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: n, Namespace: o.Namespace, Labels: labels}
	}
	typ := func(apiVersion, kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
	}
	const account = "rdmabench"
	file := o.Scenario + ".yaml"
	return []runtime.Object{
		&corev1.ServiceAccount{TypeMeta: typ("v1", "ServiceAccount"), ObjectMeta: meta(account)},
		&rbacv1.Role{TypeMeta: typ("rbac.authorization.k8s.io/v1", "Role"), ObjectMeta: meta(account), Rules: Rules()},
		&rbacv1.RoleBinding{
			TypeMeta: typ("rbac.authorization.k8s.io/v1", "RoleBinding"), ObjectMeta: meta(account),
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: account},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: account, Namespace: o.Namespace}},
		},
		&corev1.PersistentVolumeClaim{
			TypeMeta: typ("v1", "PersistentVolumeClaim"), ObjectMeta: meta(o.ResultsClaim),
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: storage}},
				StorageClassName: optional(o.StorageClass),
			},
		},
		&corev1.ConfigMap{TypeMeta: typ("v1", "ConfigMap"), ObjectMeta: meta(name), Data: map[string]string{file: string(o.ScenarioYAML)}},
		&batchv1.CronJob{
			TypeMeta: typ("batch/v1", "CronJob"), ObjectMeta: meta(name),
			Spec: batchv1.CronJobSpec{
				Schedule:          o.Schedule,
				TimeZone:          optional(o.TimeZone),
				ConcurrencyPolicy: batchv1.ForbidConcurrent, // one run at a time: two would measure each other
				JobTemplate: batchv1.JobTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       o.jobSpec(name, account, file, labels),
				},
			},
		},
	}, nil
}

func (o CronJobOptions) check() (resource.Quantity, error) {
	var problems []string
	if errs := validation.IsDNS1123Subdomain(o.Scenario); len(errs) > 0 {
		problems = append(problems, fmt.Sprintf("scenario name %q: %s", o.Scenario, strings.Join(errs, "; ")))
	}
	// A CronJob's name becomes its Jobs' names plus 11 characters.
	if n := len("rdmabench-" + o.Scenario); n > 52 {
		problems = append(problems, fmt.Sprintf("CronJob name rdmabench-%s is %d characters; at most 52 (shorten metadata.name)", o.Scenario, n))
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		problems = append(problems, fmt.Sprintf("namespace %q: %s", o.Namespace, strings.Join(errs, "; ")))
	}
	if errs := validation.IsDNS1123Subdomain(o.ResultsClaim); len(errs) > 0 {
		problems = append(problems, fmt.Sprintf("results claim %q: %s", o.ResultsClaim, strings.Join(errs, "; ")))
	}
	if len(strings.Fields(o.Schedule)) != 5 && !strings.HasPrefix(o.Schedule, "@") {
		problems = append(problems, fmt.Sprintf("schedule %q: want five cron fields (minute hour day month weekday), e.g. \"0 2 * * *\"", o.Schedule))
	}
	if o.StorageClass != "" {
		if errs := validation.IsDNS1123Subdomain(o.StorageClass); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("storage class %q: %s", o.StorageClass, strings.Join(errs, "; ")))
		}
	}
	if o.TimeZone != "" {
		// The controller reads the zone from its own tz database; a name
		// this binary's database lacks would be refused there too. "Local"
		// is Go's, not a zone name.
		if _, err := time.LoadLocation(o.TimeZone); err != nil || o.TimeZone == "Local" {
			problems = append(problems, fmt.Sprintf("time zone %q: not an IANA time zone name (e.g. Etc/UTC, Europe/Paris, America/New_York)", o.TimeZone))
		}
		if strings.Contains(o.Schedule, "TZ=") {
			problems = append(problems, fmt.Sprintf("schedule %q: give the zone once, with the time zone option, not as TZ= in the schedule", o.Schedule))
		}
	}
	if o.PushURL != "" {
		if u, err := url.Parse(o.PushURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			problems = append(problems, fmt.Sprintf("push URL %q: want the Pushgateway's http(s)://HOST:PORT", o.PushURL))
		}
	}
	if strings.TrimSpace(o.Image) == "" {
		problems = append(problems, "image: empty")
	}
	q, err := resource.ParseQuantity(o.Storage)
	if err != nil {
		problems = append(problems, fmt.Sprintf("storage %q: %v (e.g. 10Gi)", o.Storage, err))
	}
	if len(problems) > 0 {
		return q, fmt.Errorf("cronjob: %s", strings.Join(problems, "; "))
	}
	return q, nil
}

func (o CronJobOptions) jobSpec(name, account, file string, labels map[string]string) batchv1.JobSpec {
	zero := int32(0)
	env := []corev1.EnvVar{
		{Name: "SCENARIO_FILE", Value: ScenarioMount + "/" + file},
		{Name: "RESULTS_DIR", Value: ResultsMount},
		{Name: "RUN_NAMESPACE", Value: o.Namespace},
		{Name: "RUN_PREFIX", Value: o.Scenario},
	}
	if o.PushURL != "" {
		env = append(env, corev1.EnvVar{Name: "PUSHGATEWAY_URL", Value: o.PushURL})
	}
	return batchv1.JobSpec{
		BackoffLimit: &zero, // a failed night is a result, not something to retry
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				ServiceAccountName: account,
				RestartPolicy:      corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name:    "rdmabench",
					Image:   o.Image,
					Command: []string{"/bin/sh", "-c", CronJobScript},
					Env:     env,
					VolumeMounts: []corev1.VolumeMount{
						{Name: "scenario", MountPath: ScenarioMount, ReadOnly: true},
						{Name: "results", MountPath: ResultsMount},
					},
				}},
				Volumes: []corev1.Volume{
					{Name: "scenario", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
					{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.ResultsClaim}}},
				},
			},
		},
	}
}

// CronJobScript is what the scheduled container runs: the scenario into a
// new folder on the results volume, then a comparison with the latest
// passing run of the same scenario and environment there. Its exit code is
// the Job's verdict: run's when run did not pass (1 shortfall, 2 scenario,
// 3 harness, 5 nothing measured), else compare's (1 regression). compare's 4, no baseline yet
// (the first night, the first after an upgrade), is not a failure: the
// script says so and exits 0. A run that failed for the harness (neither
// 0 nor 1) is not compared. The Job's JUnit is compare.xml in the run.
// With PUSHGATEWAY_URL set, run pushes the run's figures there (--push),
// and compare its verdicts (the group job=SCENARIO/command=compare).
// The Helm chart (deploy/chart/rdmabench/files/nightly-script) runs the same
// script; a test keeps them equal.
var CronJobScript = `set -u
run="$RESULTS_DIR/$RUN_PREFIX-$(date -u +%Y%m%d-%H%M%S)"
set --
if [ -n "${PUSHGATEWAY_URL:-}" ]; then set -- --push "$PUSHGATEWAY_URL"; fi
rdmabench run "$SCENARIO_FILE" -n "$RUN_NAMESPACE" --out "$run" "$@"
ran=$?
case $ran in
` + codes(exitcode.OK, exitcode.Shortfall) + `) ;;
*) echo "rdmabench run exited $ran: not compared" >&2; exit $ran ;;
esac
rdmabench compare --baseline auto "$RESULTS_DIR" "$run" --junit "$run/compare.xml" "$@"
compared=$?
if [ "$compared" -eq ` + strconv.Itoa(exitcode.NoBaseline) + ` ]; then
  echo "no baseline yet (first run of this scenario, or first since its environment changed): nothing to compare, not a failure" >&2
  compared=0
fi
if [ "$ran" -ne 0 ]; then exit "$ran"; fi
exit "$compared"
`

// codes is a shell case pattern of exit codes ("0|1").
func codes(cs ...int) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, "|")
}

// WriteManifest prints objects as one multi-document YAML stream, as
// kubectl apply -f reads it.
func WriteManifest(w io.Writer, objs []runtime.Object) error {
	var buf bytes.Buffer
	for i, obj := range objs {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("manifest: %T: %w", obj, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(data)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// optional is a pointer to s, or nil when s is empty (the field left out).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
