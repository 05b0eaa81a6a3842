package kube

import (
	"fmt"
	"hash/fnv"
	"maps"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// The bundle: the tools image holds rdmabench, rdmabench-nccl and the
// RDMA tool bundle (perftest, rping, iperf3, each with its own loader,
// libraries and verbs providers: images/tools/bundle.sh) under BundleDir.
// The pod's init container, from the tools image, copies it into an
// emptyDir (bundleVolume), which the pod's one container mounts at
// BundleDir: whatever its image, the tools are there, and BundleBin is on
// the PATH of every command the backend runs in it (withBundlePath).
const (
	// BundleDir is where the bundle is, in the tools image and in the pod's container.
	BundleDir = "/opt/rdmabench"
	// BundleBin is the bundle's folder of programs.
	BundleBin    = BundleDir + "/bin"
	bundleVolume = "rdmabench-bundle"
	// bundleInit is the init container's name; bundleStage where it mounts the emptyDir.
	bundleInit  = "rdmabench-bundle"
	bundleStage = "/mnt/rdmabench-bundle"
)

// keepAlive is the pod container's own command: rdmabench from the
// bundle, which does nothing and ends at once on SIGTERM, so a deleted
// pod goes away without waiting out its grace (and the image needs no
// sleep of its own). The tools are started beside it through exec.
var keepAlive = []string{BundleBin + "/rdmabench", "pause"}

// bundleCopy is the init container's script: copy the bundle, or say
// which image lacks it and what to set. -f: a node that runs pods on its
// own root (the test lane's VMs) keeps the stage between pods.
const bundleCopy = `[ -x ` + BundleBin + `/rdmabench ] || { echo "this image has no rdmabench bundle at ` + BundleDir +
	`: set cluster.toolsImage to rdmabench's tools image (make image)" >&2; exit 1; }
cp -af ` + BundleDir + `/. ` + bundleStage + `/`

var runIDPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// checkRunID refuses a run id that cannot be part of pod names and label
// values.
func checkRunID(id string) error {
	if id == "" {
		return fmt.Errorf("kube: a run id is required")
	}
	if len(id) > 40 || !runIDPattern.MatchString(id) {
		return fmt.Errorf("kube: run id %q cannot name pods: use at most 40 lowercase letters, digits and '-' (or leave --run-id out)", id)
	}
	return nil
}

// podName is the pod of an endpoint: rdmabench-<run>-<endpoint>. A name
// over the 63 characters a host name may have is cut and ends in a hash of
// the whole, so that endpoints differing only at the end (pool-0, pool-1
// of a long pool name) still get pods of their own.
func (b *Backend) podName(endpoint string) string {
	n := "rdmabench-" + b.opts.RunID + "-" + endpoint
	if len(n) > 63 {
		h := fnv.New32a()
		h.Write([]byte(n))
		n = strings.TrimRight(n[:54], "-") + fmt.Sprintf("-%08x", h.Sum32())
	}
	return n
}

// ownerName is the per-run ConfigMap every pod is owned by: deleting it
// lets the garbage collector remove whatever a crashed run left.
func (b *Backend) ownerName() string { return "rdmabench-" + b.opts.RunID }

// runLabels are on every object of the run.
func (b *Backend) runLabels() map[string]string {
	return map[string]string{LabelRun: b.opts.RunID, LabelManagedBy: managedBy}
}

// placementOf is an endpoint's placement as the planner resolved it (none
// for an endpoint built by hand: placed freely, nothing requested).
func placementOf(ep endpoint.Endpoint) *endpoint.Placement {
	if ep.Placement == nil {
		return &endpoint.Placement{}
	}
	return ep.Placement
}

// podFor is the pod of one endpoint, everything the scenario asks for.
func (b *Backend) podFor(ep endpoint.Endpoint, owner *metav1.OwnerReference) (*corev1.Pod, error) {
	c := b.sc.Cluster
	p := placementOf(ep)
	labels := map[string]string{}
	maps.Copy(labels, c.Labels)
	maps.Copy(labels, b.runLabels())
	labels[LabelPool] = ep.Pool
	labels[LabelEndpoint] = ep.Name
	if p.NodeGroup != "" {
		labels[LabelNodeGroup] = p.NodeGroup
	}
	annotations := map[string]string{}
	maps.Copy(annotations, c.Annotations)
	b.networkAnnotations(annotations, p.Networks)
	inits, ctrs, volumes, err := b.containers(ep, p)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", ep.Name, err)
	}
	grace := int64(2)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: b.podName(ep.Name), Namespace: b.namespace,
			Labels: labels, Annotations: annotations,
		},
		Spec: corev1.PodSpec{
			InitContainers:                inits,
			Containers:                    ctrs,
			Volumes:                       volumes,
			ResourceClaims:                podClaims(p),
			SecurityContext:               podSecurityContext(),
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			NodeSelector:                  p.NodeSelector,
			Tolerations:                   tolerations(p.Tolerations),
			Affinity:                      b.affinity(ep.Pool, p),
			ServiceAccountName:            c.ServiceAccount,
			PriorityClassName:             c.PriorityClassName,
			HostNetwork:                   c.HostNetwork,
			EnableServiceLinks:            new(bool),
		},
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	if c.RuntimeClassName != "" {
		pod.Spec.RuntimeClassName = &c.RuntimeClassName
	}
	if c.HostNetwork {
		pod.Spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	for _, s := range c.ImagePullSecrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	if c.PodPatch != nil {
		return applyPodPatch(pod, c.PodPatch)
	}
	return pod, nil
}

// containers are the endpoint's pod containers: one, from cluster.image,
// given everything (the GPUs and the RDMA device once: a device plugin
// gives an SR-IOV VF to one container, and every test of the pod runs
// here), running rdmabench's keep-alive while the tools are started
// beside it through exec; and the init container, from the tools image,
// that copies rdmabench and its bundle into it.
func (b *Backend) containers(ep endpoint.Endpoint, p *endpoint.Placement) ([]corev1.Container, []corev1.Container, []corev1.Volume, error) {
	c := b.sc.Cluster
	volumes, err := podVolumes(p)
	if err != nil {
		return nil, nil, nil, err
	}
	volumes = append(volumes, corev1.Volume{Name: bundleVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	res, err := resources(p)
	if err != nil {
		return nil, nil, nil, err
	}
	sc := securityContext(c, capabilitiesOf(ep, c))
	init := corev1.Container{
		Name: bundleInit, Image: c.ToolsImageOf(),
		ImagePullPolicy:          corev1.PullPolicy(c.ImagePullPolicy),
		Command:                  []string{"sh", "-c", bundleCopy},
		VolumeMounts:             []corev1.VolumeMount{{Name: bundleVolume, MountPath: bundleStage}},
		SecurityContext:          sc.DeepCopy(),
		Resources:                bundleResources(res),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	main := corev1.Container{
		Name: container, Image: c.Image,
		ImagePullPolicy: corev1.PullPolicy(c.ImagePullPolicy),
		Command:         keepAlive,
		Env:             envVars(ep.Env),
		Resources:       res,
		VolumeMounts:    append(volumeMounts(p), corev1.VolumeMount{Name: bundleVolume, MountPath: BundleDir, ReadOnly: true}),
		SecurityContext: sc,
	}
	return []corev1.Container{init}, []corev1.Container{main}, volumes, nil
}

// bundleResources are the init container's: the pod's CPU and memory
// (an init container's requests count only while it runs, and alike
// requests and limits keep the pod's Guaranteed QoS), no device.
func bundleResources(pod corev1.ResourceRequirements) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := pod.Limits[name]; ok {
			if out.Limits == nil {
				out.Limits, out.Requests = corev1.ResourceList{}, corev1.ResourceList{}
			}
			out.Limits[name], out.Requests[name] = q, q
		}
	}
	return out
}

// affinity keeps the pods of a pool, and of the pools it avoids, on
// different topology domains (nodes by default), so traffic between them
// crosses the fabric. Required: a placement that cannot be met fails the
// run instead of measuring loopback. A pool that puts several pods on a
// node (perNode) holds each node group together (pod affinity) and keeps
// it from the pool's other groups, the other pools still avoided.
func (b *Backend) affinity(pool string, p *endpoint.Placement) *corev1.Affinity {
	if p.AntiAffinity == "" || len(p.AvoidPools) == 0 {
		return nil
	}
	if p.NodeGroup == "" {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{b.poolsTerm(p.AvoidPools, p.AntiAffinity)},
		}}
	}
	var apart []corev1.PodAffinityTerm
	if others := slices.DeleteFunc(slices.Clone(p.AvoidPools), func(n string) bool { return n == pool }); len(others) > 0 {
		apart = append(apart, b.poolsTerm(others, p.AntiAffinity))
	}
	apart = append(apart, corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{LabelRun: b.opts.RunID, LabelPool: pool},
			MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: LabelNodeGroup, Operator: metav1.LabelSelectorOpNotIn, Values: []string{p.NodeGroup},
			}},
		},
		TopologyKey: p.AntiAffinity,
	})
	together := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: b.opts.RunID, LabelNodeGroup: p.NodeGroup}},
		TopologyKey:   p.AntiAffinity,
	}
	return &corev1.Affinity{
		PodAffinity:     &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{together}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: apart},
	}
}

// poolsTerm matches the run's pods of the named pools.
func (b *Backend) poolsTerm(pools []string, key string) corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{LabelRun: b.opts.RunID},
			MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: LabelPool, Operator: metav1.LabelSelectorOpIn, Values: pools,
			}},
		},
		TopologyKey: key,
	}
}

// resources are what the pod's container requests, and is limited to
// alike (Guaranteed QoS when CPU and memory are given): CPU and memory,
// the extended resources (GPUs, the RDMA device) and hugepages by page
// size; and the DRA claims.
func resources(p *endpoint.Placement) (corev1.ResourceRequirements, error) {
	list := corev1.ResourceList{}
	add := func(name, q string) error {
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return fmt.Errorf("resource %s: quantity %q: %v", name, q, err)
		}
		list[corev1.ResourceName(name)] = v
		return nil
	}
	for name, q := range p.Resources {
		if err := add(name, q); err != nil {
			return corev1.ResourceRequirements{}, err
		}
	}
	for name, q := range map[string]string{string(corev1.ResourceCPU): p.CPU, string(corev1.ResourceMemory): p.Memory} {
		if q != "" {
			if err := add(name, q); err != nil {
				return corev1.ResourceRequirements{}, err
			}
		}
	}
	for size, q := range p.Hugepages {
		if err := add(corev1.ResourceHugePagesPrefix+size, q); err != nil {
			return corev1.ResourceRequirements{}, err
		}
	}
	var out corev1.ResourceRequirements
	if len(list) > 0 {
		out = corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
	}
	for _, rc := range p.ResourceClaims {
		out.Claims = append(out.Claims, corev1.ResourceClaim{Name: rc.Name})
	}
	return out, nil
}

// ShmVolume is the name of the pod's /dev/shm volume.
const ShmVolume = "dshm"

// podVolumes are the memory-backed /dev/shm (sized) and one hugepages
// volume per page size.
func podVolumes(p *endpoint.Placement) ([]corev1.Volume, error) {
	var vols []corev1.Volume
	if p.ShmSize != "" {
		q, err := resource.ParseQuantity(p.ShmSize)
		if err != nil {
			return nil, fmt.Errorf("shmSize %q: %v", p.ShmSize, err)
		}
		vols = append(vols, corev1.Volume{Name: ShmVolume, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &q}}})
	}
	for _, size := range slices.Sorted(maps.Keys(p.Hugepages)) {
		vols = append(vols, corev1.Volume{Name: hugepagesVolume(size), VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMedium("HugePages-" + size)}}})
	}
	return vols, nil
}

func hugepagesVolume(size string) string { return "hugepages-" + strings.ToLower(size) }

// volumeMounts: /dev/shm (NIXL and NCCL move data between processes
// through it) and the hugepages.
func volumeMounts(p *endpoint.Placement) []corev1.VolumeMount {
	var mounts []corev1.VolumeMount
	if p.ShmSize != "" {
		mounts = append(mounts, corev1.VolumeMount{Name: ShmVolume, MountPath: "/dev/shm"})
	}
	for _, size := range slices.Sorted(maps.Keys(p.Hugepages)) {
		mounts = append(mounts, corev1.VolumeMount{Name: hugepagesVolume(size), MountPath: "/dev/hugepages-" + size})
	}
	return mounts
}

// podClaims are the pod's DRA claims, as the placement names them.
func podClaims(p *endpoint.Placement) []corev1.PodResourceClaim {
	var out []corev1.PodResourceClaim
	for _, rc := range p.ResourceClaims {
		c := corev1.PodResourceClaim{Name: rc.Name}
		if rc.ClaimName != "" {
			c.ResourceClaimName = &rc.ClaimName
		} else {
			c.ResourceClaimTemplateName = &rc.TemplateName
		}
		out = append(out, c)
	}
	return out
}

// RootUID is the user the tools run as. Capabilities given to a
// container reach only root's processes (Kubernetes sets no ambient
// capabilities), so pinned memory (IPC_LOCK) needs UID 0; and the MPI
// launcher's ssh and sshd refuse a UID without a passwd entry ("No user
// exists for uid …"), which a random UID from a namespace range is. The
// SCC in deploy/openshift says so and allows exactly this UID.
const RootUID = int64(0)

// securityContext is the tools container's: every capability dropped but
// those the placement adds (IPC_LOCK for pinned memory by default; the
// sshd's for a pool with remote MPI ranks), no privilege escalation, as
// root (RootUID). privileged only when the scenario asks, and then as the
// runtime gives it.
func securityContext(c *scenarios.Cluster, caps []string) *corev1.SecurityContext {
	uid := RootUID
	sc := &corev1.SecurityContext{RunAsUser: &uid}
	if c.Privileged {
		sc.Privileged = &c.Privileged
		return sc
	}
	no := false
	sc.AllowPrivilegeEscalation = &no
	sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	for _, cp := range caps {
		sc.Capabilities.Add = append(sc.Capabilities.Add, corev1.Capability(strings.TrimPrefix(cp, "CAP_")))
	}
	return sc
}

// capabilitiesOf are the capabilities an endpoint's container adds: its
// placement's, or the cluster's for an endpoint built without a plan.
func capabilitiesOf(ep endpoint.Endpoint, c *scenarios.Cluster) []string {
	if ep.Placement == nil {
		return c.Capabilities
	}
	return ep.Placement.Capabilities
}

// podSecurityContext: the runtime's default seccomp profile, which
// OpenShift's SCCs require and PodSecurity "restricted" asks for; RDMA
// verbs (ioctl and mmap on /dev/infiniband) pass it.
func podSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
}

// clusterTolerations are the cluster section's own tolerations, for the
// run's pods that belong to no pool (the etcd); the endpoints' come
// resolved in their placement.
func clusterTolerations(ts []scenarios.Toleration) []corev1.Toleration {
	out := make([]endpoint.Toleration, len(ts))
	for i, t := range ts {
		out[i] = endpoint.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
		if t.TolerationSeconds != nil {
			secs := int64(*t.TolerationSeconds)
			out[i].Seconds = &secs
		}
	}
	return tolerations(out)
}

func tolerations(ts []endpoint.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range ts {
		out = append(out, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.Seconds})
	}
	return out
}

func envVars(env map[string]string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, corev1.EnvVar{Name: k, Value: env[k]})
	}
	return out
}
