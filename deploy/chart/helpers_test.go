package chart

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files and the chart's copies (files/) from their sources")

// repo is the repository root, from this package's folder.
const repo = "../.."

// docs splits a manifest into its objects as plain maps (any kind, the
// SCC's too), comment-only documents dropped.
func docs(t *testing.T, manifest string) []map[string]any {
	t.Helper()
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader([]byte(manifest))))
	var out []map[string]any
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
}

// byKindName indexes objects as "Kind/name".
func byKindName(objs []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, o := range objs {
		meta, _ := o["metadata"].(map[string]any)
		out[o["kind"].(string)+"/"+meta["name"].(string)] = o
	}
	return out
}

// helmLabels are the labels the chart adds to plan -o cronjob's.
var helmLabels = []string{"app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart"}

// stripHelm removes what the chart adds to an object over plan's: Helm's
// labels and the results claim's keep policy.
func stripHelm(o map[string]any) map[string]any {
	meta, _ := o["metadata"].(map[string]any)
	if labels, ok := meta["labels"].(map[string]any); ok {
		for _, k := range helmLabels {
			delete(labels, k)
		}
	}
	if ann, ok := meta["annotations"].(map[string]any); ok {
		delete(ann, "helm.sh/resource-policy")
		if len(ann) == 0 {
			delete(meta, "annotations")
		}
	}
	return o
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the rendering (go test ./deploy/chart -update after checking the change):\n%s", path, got)
	}
}

func mustRender(t *testing.T, o Options) *Rendered {
	t.Helper()
	if o.Release == "" {
		o.Release = "nightly"
	}
	r, err := Render(Dir(), o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
