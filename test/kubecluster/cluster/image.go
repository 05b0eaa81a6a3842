package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DefaultImageArchive is the tools image `make image` writes
// (images/tools), found from the repository root above the working
// directory; RDMABENCH_TOOLS_IMAGE overrides it.
func DefaultImageArchive() string {
	if p := os.Getenv("RDMABENCH_TOOLS_IMAGE"); p != "" {
		return p
	}
	if root, err := RepoRoot(); err == nil {
		return filepath.Join(root, ".work", "images", "rdmabench-tools.oci.tar")
	}
	return ""
}

// UnpackImage unpacks an OCI image archive (an image layout as a tar, one
// image in its index) into cacheDir/rootfs-<digest>, once: a directory
// already there for the same manifest digest is reused, so every test
// binary shares one copy. It returns the root file system's path. Layers
// are applied in order with GNU tar (owners, modes, links and device nodes
// kept); OCI whiteouts are honoured for files, which the one-layer tools
// image never has.
func UnpackImage(archive, cacheDir string) (string, error) {
	sum, err := fileSHA256(archive)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cacheDir, "rootfs-"+sum[:16])
	if _, err := os.Stat(filepath.Join(dst, ".unpacked")); err == nil {
		return filepath.Join(dst, "rootfs"), nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, "unpack-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	layout, rootfs := filepath.Join(tmp, "layout"), filepath.Join(tmp, "rootfs")
	for _, d := range []string{layout, rootfs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
	}
	if err := untar(archive, layout); err != nil {
		return "", err
	}
	layers, err := imageLayers(layout)
	if err != nil {
		return "", err
	}
	for _, l := range layers {
		if err := untar(l, rootfs); err != nil {
			return "", err
		}
		if err := applyWhiteouts(rootfs); err != nil {
			return "", err
		}
	}
	if err := os.RemoveAll(layout); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".unpacked"), []byte(archive+"\n"), 0o644); err != nil {
		return "", err
	}
	// Another test binary may have won the race: its copy is as good.
	if err := os.Rename(tmp, dst); err != nil {
		if _, serr := os.Stat(filepath.Join(dst, ".unpacked")); serr != nil {
			return "", err
		}
	}
	return filepath.Join(dst, "rootfs"), nil
}

func untar(archive, dir string) error {
	out, err := exec.Command("tar", "-x", "-p", "--numeric-owner", "-f", archive, "-C", dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("unpack %s: %v: %s", archive, err, out)
	}
	return nil
}

type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

// imageLayers reads index.json, its (first) manifest and returns the
// layers' blob paths in order.
func imageLayers(layout string) ([]string, error) {
	blob := func(d ociDescriptor) (string, error) {
		alg, hex, ok := strings.Cut(d.Digest, ":")
		if !ok || alg != "sha256" || strings.ContainsAny(hex, "/.") {
			return "", fmt.Errorf("image: unsupported digest %q", d.Digest)
		}
		return filepath.Join(layout, "blobs", alg, hex), nil
	}
	var index struct{ Manifests []ociDescriptor }
	if err := readJSON(filepath.Join(layout, "index.json"), &index); err != nil {
		return nil, err
	}
	if len(index.Manifests) == 0 {
		return nil, fmt.Errorf("image: index.json names no manifest")
	}
	mp, err := blob(index.Manifests[0])
	if err != nil {
		return nil, err
	}
	var manifest struct{ Layers []ociDescriptor }
	if err := readJSON(mp, &manifest); err != nil {
		return nil, err
	}
	var out []string
	for _, l := range manifest.Layers {
		p, err := blob(l)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("image: manifest has no layers")
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// applyWhiteouts removes what a layer's .wh.NAME entries delete, and the
// markers themselves (.wh..wh..opq opaque markers are only removed).
func applyWhiteouts(root string) error {
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if !strings.HasPrefix(name, ".wh.") {
			return nil
		}
		if name != ".wh..wh..opq" {
			if err := os.RemoveAll(filepath.Join(filepath.Dir(p), strings.TrimPrefix(name, ".wh."))); err != nil {
				return err
			}
		}
		return os.RemoveAll(p)
	})
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ToolsRootFS unpacks the tools image (DefaultImageArchive) into the
// repository's .work/images cache and returns its root file system. With
// no archive there it returns "" and an error saying how to build one
// (`make image`); callers decide whether to run on the host instead.
func ToolsRootFS() (string, error) {
	archive := DefaultImageArchive()
	if archive == "" {
		return "", fmt.Errorf("no tools image: no repository root and RDMABENCH_TOOLS_IMAGE unset")
	}
	if _, err := os.Stat(archive); err != nil {
		return "", fmt.Errorf("no tools image at %s (make image): %w", archive, err)
	}
	return UnpackImage(archive, filepath.Join(filepath.Dir(archive), "unpacked"))
}
