package e2ekube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rdmabench/rdmabench/report/schema"
)

// draDriver is the DRA driver name the test publishes devices for, as a
// DRA driver's kubelet plugin would (the test agent runs no driver: it
// only publishes each node's ResourceSlice).
const draDriver = "rdma.test.rdmabench.io"

// TestDRAResourceClaimsPassedThrough: resourceClaims in the scenario reach
// the pods as DRA claims. Each node publishes one device in a
// ResourceSlice; the pods ask for one through a ResourceClaimTemplate. The
// real resourceclaim controller makes a claim per pod, the real scheduler
// allocates each a device of its node, and the run passes; the claims go
// with the pods.
func TestDRAResourceClaimsPassedThrough(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs := c.Client()
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "e2e-rdma-nic"},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf("device.driver == %q", draDriver)}}}}}
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.ResourceV1().DeviceClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
	for _, node := range c.NodeNames() {
		slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + node},
			Spec: resourcev1.ResourceSliceSpec{Driver: draDriver, NodeName: &node,
				Pool:    resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
				Devices: []resourcev1.Device{{Name: "nic0"}}}}
		if _, err := cs.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.ResourceV1().ResourceSlices().Delete(context.Background(), slice.Name, metav1.DeleteOptions{})
		})
	}
	createNamespace(t, c, "e2e-dra")
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "rdma-nic", Namespace: "e2e-dra"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "nic", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class.Name}}}}}}}
	if _, err := cs.ResourceV1().ResourceClaimTemplates("e2e-dra").Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc := strings.Replace(iperfOnly("e2e-dra", ""), "  startupTimeout: 90s\n",
		"  startupTimeout: 90s\n  resourceClaims: [{name: nic, resourceClaimTemplateName: rdma-nic}]\n", 1)
	r := run(t, c, writeScenario(t, sc), 3*time.Minute, nil, "--keep", "--run-id", "dra-1")
	t.Cleanup(func() {
		if out, err := runCmd(t, "clean", "--kubeconfig", c.Kubeconfig, "--run", "dra-1", "-n", "e2e-dra"); err != nil {
			t.Errorf("clean: %v\n%s", err, out)
		}
		assertNothingLeft(t, c)
	})
	if r.code != 0 || r.rep == nil || len(r.rep.Results) != 2 {
		t.Fatalf("exit %d", r.code)
	}
	for _, res := range r.rep.Results {
		if res.Verdict != schema.VerdictPass {
			t.Errorf("%s: %s %q", res.Test, res.Verdict, res.Reason)
		}
	}
	claims, err := cs.ResourceV1().ResourceClaims("e2e-dra").List(ctx, metav1.ListOptions{})
	if err != nil || len(claims.Items) != 3 {
		t.Fatalf("%v: %d claims, want one per pod (3)", err, len(claims.Items))
	}
	nodes := map[string]bool{}
	for _, cl := range claims.Items {
		a := cl.Status.Allocation
		if a == nil || len(a.Devices.Results) != 1 || a.Devices.Results[0].Driver != draDriver || a.Devices.Results[0].Device != "nic0" {
			t.Errorf("claim %s: allocation %+v, want nic0 of %s", cl.Name, a, draDriver)
			continue
		}
		nodes[a.Devices.Results[0].Pool] = true
	}
	if len(nodes) != 3 {
		t.Errorf("claims allocated on %d nodes' pools, want 3 (one pod per node)", len(nodes))
	}
}
