package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// nadCRD is Multus' NetworkAttachmentDefinition CustomResourceDefinition,
// as Multus installs it: the kube backend checks named networks against it.
const nadCRD = `{
 "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "network-attachment-definitions.k8s.cni.cncf.io"},
 "spec": {"group": "k8s.cni.cncf.io", "scope": "Namespaced",
  "names": {"plural": "network-attachment-definitions", "singular": "network-attachment-definition", "kind": "NetworkAttachmentDefinition", "shortNames": ["net-attach-def"]},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
     "spec": {"type": "object", "properties": {"config": {"type": "string"}}}}}}}]}}`

// InstallMultusAPI serves the NetworkAttachmentDefinition API (the node
// agents stand for Multus itself) and waits until discovery shows it.
func (c *Cluster) InstallMultusAPI(ctx context.Context) error {
	rc := c.Client().Discovery().RESTClient()
	err := rc.Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").
		SetHeader("Content-Type", "application/json").Body([]byte(nadCRD)).Do(ctx).Error()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := c.Client().Discovery().ServerResourcesForGroupVersion("k8s.cni.cncf.io/v1"); err == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return errors.New("the k8s.cni.cncf.io/v1 API never appeared")
}

// CreateNAD makes a NetworkAttachmentDefinition, as a cluster admin would.
func (c *Cluster) CreateNAD(ctx context.Context, ns, name string) error {
	body := fmt.Sprintf(`{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition","metadata":{"name":%q,"namespace":%q},
  "spec":{"config":"{\"cniVersion\":\"0.3.1\",\"type\":\"bridge\",\"ipam\":{\"type\":\"host-local\"}}"}}`, name, ns)
	return c.Client().Discovery().RESTClient().Post().AbsPath("/apis/k8s.cni.cncf.io/v1/namespaces", ns, "network-attachment-definitions").
		SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(ctx).Error()
}
