// Command ocigunzip rewrites every gzip-compressed layer of an OCI image
// layout (a folder, as umoci leaves it) as an uncompressed tar, with new
// digests for the layers, manifests and index. The soft-RoCE VM nodes
// import node-images.oci.tar into containerd under CPU emulation, where
// gunzip is the slowest part of unpacking an image (about three quarters
// of a 5-minute import with both VMs busy); the layers' content, and so
// their diff IDs in each image's configuration, do not change.
//
//	ocigunzip LAYOUT
package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ocigunzip:", err)
		os.Exit(1)
	}
}

const (
	gzipLayer = "application/vnd.oci.image.layer.v1.tar+gzip"
	tarLayer  = "application/vnd.oci.image.layer.v1.tar"
)

// descriptor is the part of an OCI descriptor this rewrites; the rest of
// each document is kept as it is (json.RawMessage).
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: ocigunzip LAYOUT")
	}
	l := layout(args[0])
	var index map[string]json.RawMessage
	if err := l.readJSON(filepath.Join(l.dir(), "index.json"), &index); err != nil {
		return err
	}
	var manifests []descriptor
	if err := json.Unmarshal(index["manifests"], &manifests); err != nil {
		return fmt.Errorf("index.json: %w", err)
	}
	done := map[string]descriptor{}  // old layer digest → new descriptor
	moved := map[string]descriptor{} // old manifest digest → new one
	for i, m := range manifests {
		nm, ok := moved[m.Digest]
		if !ok {
			var err error
			if nm, err = l.rewriteManifest(m, done); err != nil {
				return err
			}
			moved[m.Digest] = nm
		}
		manifests[i].Digest, manifests[i].Size = nm.Digest, nm.Size
	}
	b, err := json.Marshal(manifests)
	if err != nil {
		return err
	}
	index["manifests"] = b
	out, err := json.Marshal(index)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(l.dir(), "index.json"), out, 0o644)
}

type layout string

func (l layout) dir() string { return string(l) }

func (l layout) blob(digest string) string {
	return filepath.Join(l.dir(), "blobs", strings.Replace(digest, ":", string(filepath.Separator), 1))
}

func (l layout) readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// rewriteManifest gunzips the manifest's gzip layers (each once, shared
// layers reused) and stores the manifest again under its new digest.
func (l layout) rewriteManifest(m descriptor, done map[string]descriptor) (descriptor, error) {
	var doc map[string]json.RawMessage
	if err := l.readJSON(l.blob(m.Digest), &doc); err != nil {
		return m, err
	}
	var layers []descriptor
	if err := json.Unmarshal(doc["layers"], &layers); err != nil {
		return m, fmt.Errorf("manifest %s: %w", m.Digest, err)
	}
	for i, d := range layers {
		if d.MediaType != gzipLayer {
			continue
		}
		nd, ok := done[d.Digest]
		if !ok {
			var err error
			if nd, err = l.gunzip(d); err != nil {
				return m, err
			}
			done[d.Digest] = nd
		}
		layers[i] = nd
	}
	b, err := json.Marshal(layers)
	if err != nil {
		return m, err
	}
	doc["layers"] = b
	out, err := json.Marshal(doc)
	if err != nil {
		return m, err
	}
	nm, err := l.store(out)
	if err != nil {
		return m, err
	}
	old := m.Digest
	m.Digest, m.Size = nm.Digest, nm.Size
	return m, os.Remove(l.blob(old))
}

// gunzip stores the uncompressed layer as a blob of its own and removes
// the compressed one.
func (l layout) gunzip(d descriptor) (descriptor, error) {
	in, err := os.Open(l.blob(d.Digest))
	if err != nil {
		return d, err
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return d, fmt.Errorf("layer %s: %w", d.Digest, err)
	}
	tmp, err := os.CreateTemp(filepath.Join(l.dir(), "blobs"), "layer-*")
	if err != nil {
		return d, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), zr)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return d, fmt.Errorf("layer %s: %w", d.Digest, err)
	}
	nd := descriptor{MediaType: tarLayer, Digest: "sha256:" + hex.EncodeToString(h.Sum(nil)), Size: n, Annotations: d.Annotations}
	if err := os.Rename(tmp.Name(), l.blob(nd.Digest)); err != nil {
		return d, err
	}
	return nd, os.Remove(l.blob(d.Digest))
}

// store writes b as a blob and returns its descriptor.
func (l layout) store(b []byte) (descriptor, error) {
	sum := sha256.Sum256(b)
	d := descriptor{Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(b))}
	return d, os.WriteFile(l.blob(d.Digest), b, 0o644)
}
