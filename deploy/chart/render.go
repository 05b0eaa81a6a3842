package chart

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/client-go/discovery"
)

// Dir is the chart's folder, found from this file's place in the
// repository (tests run in other folders).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "rdmabench")
}

// Options say what to render: the release, its namespace, the values (as
// --set and --set-file give them) and the API versions the cluster serves
// beyond Kubernetes' own (security.openshift.io/v1 on OpenShift), which
// Helm reads from discovery at install time.
type Options struct {
	Release     string
	Namespace   string
	Values      map[string]any
	APIVersions []string
}

// Rendered is what `helm install` would create: the objects, in Helm's
// install order, as one multi-document YAML stream, and the release notes
// it prints.
type Rendered struct {
	Manifest string
	Notes    string
	// Kinds are the objects' kinds in Manifest's order.
	Kinds []string
}

// Render renders the chart in dir. Values are checked against the chart's
// values.schema.json, as Helm does; a template's fail (a scenario that is
// not for the kube backend, say) is the error.
func Render(dir string, o Options) (*Rendered, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	return render(ch, o)
}

func render(ch *helmchart.Chart, o Options) (*Rendered, error) {
	caps := chartutil.DefaultCapabilities.Copy()
	caps.APIVersions = append(caps.APIVersions, o.APIVersions...)
	opts := chartutil.ReleaseOptions{Name: o.Release, Namespace: o.Namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, o.Values, opts, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	out := &Rendered{}
	for name, content := range files {
		if strings.HasSuffix(name, "/NOTES.txt") {
			out.Notes = content
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	if len(hooks) > 0 {
		return nil, fmt.Errorf("the chart has %d hook(s); it should have none", len(hooks))
	}
	var b strings.Builder
	for i, m := range manifests {
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "# Source: %s\n%s\n", m.Name, strings.TrimRight(m.Content, "\n"))
		out.Kinds = append(out.Kinds, m.Head.Kind)
	}
	out.Manifest = b.String()
	return out, nil
}

// APIVersions are the group/versions a cluster serves, from its discovery,
// as Helm hands them to templates (.Capabilities.APIVersions): on OpenShift
// they include security.openshift.io/v1.
func APIVersions(d discovery.ServerGroupsInterface) ([]string, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	var out []string
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			out = append(out, v.GroupVersion)
		}
	}
	return out, nil
}
