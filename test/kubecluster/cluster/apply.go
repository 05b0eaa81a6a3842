package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// Applied is one object Apply created, enough to delete it again.
type Applied struct {
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
}

// Apply creates every object of a multi-document YAML manifest, as
// `kubectl create -f` does, with strict field validation (an unknown field
// is the apiserver's error), any kind the apiserver serves (CRDs' too, once
// discovery shows them). It returns what it created, in order.
func (c *Cluster) Apply(ctx context.Context, manifest []byte) ([]Applied, error) {
	dyn, err := dynamic.NewForConfig(c.restConfig("admin"))
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.client.Discovery()))
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var done []Applied
	for i := 1; ; i++ {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return done, nil
		}
		if err != nil {
			return done, fmt.Errorf("document %d: %w", i, err)
		}
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return done, fmt.Errorf("document %d: %w", i, err)
		}
		if len(obj.Object) == 0 {
			continue // comments only
		}
		gvk := obj.GroupVersionKind()
		m, err := mapping(ctx, mapper, gvk)
		if err != nil {
			return done, fmt.Errorf("document %d (%s %s): %w", i, gvk.Kind, obj.GetName(), err)
		}
		ri := dyn.Resource(m.Resource)
		var client dynamic.ResourceInterface = ri
		ns := ""
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = obj.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			client = ri.Namespace(ns)
		}
		if _, err := client.Create(ctx, &obj, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			return done, fmt.Errorf("document %d (%s %s): %w", i, gvk.Kind, obj.GetName(), err)
		}
		done = append(done, Applied{Resource: m.Resource, Namespace: ns, Name: obj.GetName()})
	}
}

// mapping finds a kind's resource, re-reading discovery while a kind just
// defined by a CustomResourceDefinition is not served yet (bounded).
func mapping(ctx context.Context, mapper *restmapper.DeferredDiscoveryRESTMapper, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil || time.Now().After(deadline) {
			return m, err
		}
		mapper.Reset()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Delete removes what Apply created, last first; objects already gone are
// no error.
func (c *Cluster) Delete(ctx context.Context, objs []Applied) error {
	dyn, err := dynamic.NewForConfig(c.restConfig("admin"))
	if err != nil {
		return err
	}
	var errs []error
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		var client dynamic.ResourceInterface = dyn.Resource(o.Resource)
		if o.Namespace != "" {
			client = dyn.Resource(o.Resource).Namespace(o.Namespace)
		}
		if err := client.Delete(ctx, o.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", o.Resource.Resource, o.Name, err))
		}
	}
	return errors.Join(errs...)
}
