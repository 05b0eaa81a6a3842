#!/bin/sh
# bundle.sh ROOT: makes rdmabench's RDMA tool bundle at ROOT/opt/rdmabench
# (images/tools/build.sh runs it as a customize hook, on the image's root).
# A pod's init container copies the bundle into an emptyDir that the pod's
# one container, from any glibc image (the user's serving image), mounts at
# /opt/rdmabench; the kube backend puts /opt/rdmabench/bin on PATH.
#   bin/rdmabench, bin/rdmabench-nccl,   rdmabench's own programs, as built
#   bin/rdmabench-nixl, bin/rdmabench-deepep
#   bin/TOOL                              a sh wrapper per tool (below)
#   libexec/TOOL                          Debian's binary of the tool
#   lib/                                  Debian's loader and every library
#                                         the tools and the verbs providers
#                                         need (their ldd closure)
#   lib/libibverbs/                       the verbs providers (mlx5, rxe, …)
#   etc/libibverbs.d/                     their config, for reference
# Each wrapper execs the bundle's own loader with --library-path (and
# --inhibit-cache), so none of the image's libraries is used for the
# tools; libibverbs reads its config from the image's /etc, so the wrapper
# names the bundle's providers in RDMAV_DRIVERS (absolute paths: rdma-core
# loads NAME-rdmavN.so from there).
set -eu
root=$1
B=/opt/rdmabench
# perftest (every ib_* of the package), rping, iperf3.
tools=$(chroot "$root" dpkg -L perftest rdmacm-utils iperf3 | grep -E '^/usr/bin/(ib_[a-z_]+|rping|iperf3)$' | sort)
[ -n "$tools" ] || { echo "bundle.sh: no tool found in the image" >&2; exit 1; }
rm -rf "$root$B"
mkdir -p "$root$B/bin" "$root$B/libexec" "$root$B/lib/libibverbs" "$root$B/etc/libibverbs.d"
cp /dev/null "$root$B/lib/.keep"
for p in rdmabench rdmabench-nccl rdmabench-nixl rdmabench-deepep; do
  [ -x "$root/usr/local/bin/$p" ] && cp -p "$root/usr/local/bin/$p" "$root$B/bin/$p"
done
provdir=$(chroot "$root" dpkg -L ibverbs-providers | grep -E '/libibverbs/lib[a-z0-9_]+-rdmav[0-9]+\.so$' | sed 's|/[^/]*$||' | sort -u | head -1)
[ -n "$provdir" ] || { echo "bundle.sh: ibverbs-providers has no provider" >&2; exit 1; }
drivers=
for so in "$root$provdir"/lib*-rdmav*.so; do
  cp -L "$so" "$root$B/lib/libibverbs/"
  drivers="$drivers${drivers:+:}\$d/lib/libibverbs/$(basename "$so" | sed 's/-rdmav[0-9]*\.so$//')"
done
cp -L "$root"/etc/libibverbs.d/*.driver "$root$B/etc/libibverbs.d/"
# The loader, and the closure of shared libraries (ldd in the image).
loader=$(chroot "$root" sh -c 'readlink -f /lib64/ld-linux-x86-64.so.2')
cp -L "$root$loader" "$root$B/lib/ld-linux-x86-64.so.2"
# The providers' glob expands in the image (the single quotes are for
# chroot's shell), the tools are a word list, split on purpose.
# shellcheck disable=SC2016,SC2086
chroot "$root" sh -c 'd=$1; shift; for f in "$@" "$d"/lib*-rdmav*.so; do ldd "$f" || exit 1; done' sh "$provdir" $tools |
  awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u | while read -r lib; do
    cp -L "$root$lib" "$root$B/lib/$(basename "$lib")"
  done
for t in $tools; do
  n=$(basename "$t")
  cp -p "$root$t" "$root$B/libexec/$n"
  cat > "$root$B/bin/$n" <<WRAP
#!/bin/sh
# rdmabench's bundle: Debian's $n with its own loader, libraries and verbs
# providers (images/tools/bundle.sh), whatever the image's are.
d=\$(cd "\${0%/*}/.." && pwd -P) || exit 127
RDMAV_DRIVERS="$drivers"
export RDMAV_DRIVERS
unset LD_PRELOAD
exec "\$d/lib/ld-linux-x86-64.so.2" --inhibit-cache --library-path "\$d/lib" --argv0 "\${0##*/}" "\$d/libexec/$n" "\$@"
WRAP
  chmod 0755 "$root$B/bin/$n"
done
rm -f "$root$B/lib/.keep"
echo "bundle.sh: $B: $(echo "$tools" | wc -w) tools, $(find "$root$B/lib" -maxdepth 1 -type f | wc -l) libraries, $(find "$root$B/lib/libibverbs" -type f | wc -l) verbs providers" >&2
