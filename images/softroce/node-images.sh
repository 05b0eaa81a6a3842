#!/bin/sh
# node-images.sh TOOLS_OCI OUT: the images the VM nodes' containerd imports
# (no registry), as one OCI archive OUT made from the tools image's
# archive (make image) with umoci, its layers stored uncompressed:
#   lane      the tools image as built (also the pods' sandbox image: its
#             command is `sleep infinity`, and registry.k8s.io/pause cannot
#             be pulled here)
#   no-rping  the same with a layer that deletes /usr/bin/rping: the lane's
#             "image that lacks a tool"
set -eu
tools=$1; out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/layout"
tar -C "$tmp/layout" -xf "$tools"
tag=$(umoci ls --layout "$tmp/layout" | head -n 1)
[ -n "$tag" ] || { echo "node-images.sh: $tools holds no tagged image" >&2; exit 1; }
[ "$tag" = lane ] || umoci tag --image "$tmp/layout:$tag" lane
# An OCI whiteout: a layer holding usr/bin/.wh.rping removes usr/bin/rping.
mkdir -p "$tmp/wh/usr/bin"
: > "$tmp/wh/usr/bin/.wh.rping"
tar -C "$tmp/wh" --owner=0 --group=0 --numeric-owner -cf "$tmp/wh.tar" usr
umoci raw add-layer --image "$tmp/layout:lane" --tag no-rping \
  --history.created_by "rdmabench images/softroce/node-images.sh: remove rping" "$tmp/wh.tar"
[ "$tag" = lane ] || umoci rm --image "$tmp/layout:$tag"
umoci gc --layout "$tmp/layout"
# Uncompressed layers: containerd unpacks them under CPU emulation in the
# VMs, where gunzip costs most of the import (ocigunzip says more).
(cd "$(dirname "$0")/../.." && ${GO:-go} run ./images/ocigunzip "$tmp/layout")
tar -C "$tmp/layout" -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "node-images.sh: $out ($(du -h "$out" | cut -f1)): $(umoci ls --layout "$tmp/layout" | tr '\n' ' ')" >&2
