#!/bin/bash
# nixl-rdmabench.sh: nixl-build.sh, then nixlbench through `rdmabench run` of
# .work/gpu/nixl-single-host.yaml (rdmabench from .work/gpu/rdmabench3.gz), then raw.
# Builds UCX 1.22.0, gflags 2.2.2, Abseil 20250814.1 and NIXL + nixlbench (ai-dynamo/nixl
# 8770b655a, UCX plugin, ASIO runtime: no etcd-cpp-apiv3) on a GPU machine with no network,
# from the source bundle .work/gpu/nixl-src.tar.gz (UCX already autogen'd elsewhere, since
# the machine has no libtool; nixl's meson subprojects taskflow/asio/tomlplusplus unpacked
# in place). Then runs nixlbench between two processes on this host, DRAM and VRAM, READ
# and WRITE (UCX: --without-gda and make -k, since its CUDA perftest kernels include DOCA
# GPUNetIO headers even then; gflags: CMAKE_POLICY_VERSION_MINIMUM for CMake 4). Nothing of the sources or binaries is committed.
set -x
R=$PWD; W=/tmp/nx; P=/tmp/nxp
if [ "$NIXL_RESUME" != 1 ]; then rm -rf $W $P; mkdir -p $W $P; cd $W
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
tar xzf $R/.work/gpu/nixl-src.tar.gz
sed -i "s/^subdir(.python.)/# no python bindings: their wheel build fetches setuptools from PyPI/" nixl/src/bindings/meson.build
# asio: NIXL's UCX plugin calls io_context::post, which asio (1.30.2 as bundled, and 1.38) only
# declares without ASIO_NO_DEPRECATED; the bundled wrap's meson.build defines it. Build
# configuration only (no NIXL source touched): drop the define, and make both meson projects
# use the bundled 1.30.2 (--force-fallback-for=asio) rather than any system asio.
sed -i "s/, '-DASIO_NO_DEPRECATED'//" nixl/subprojects/asio-1.30.2/meson.build
[ -d nixl/benchmark/nixlbench/subprojects/asio-1.30.2 ] || cp -a nixl/subprojects/asio-1.30.2 nixl/benchmark/nixlbench/subprojects/
grep -n ASIO nixl/subprojects/asio-1.30.2/meson.build
T0=$(date +%s)
( cd gflags && cmake -S . -B b -G Ninja -DCMAKE_INSTALL_PREFIX=$P -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_POLICY_VERSION_MINIMUM=3.5 && ninja -C b install ) > $W/gflags.log 2>&1 &
( cd abseil && cmake -S . -B b -G Ninja -DCMAKE_INSTALL_PREFIX=$P -DCMAKE_CXX_STANDARD=20 -DABSL_PROPAGATE_CXX_STD=ON -DBUILD_TESTING=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=Release && ninja -C b -j6 install ) > $W/absl.log 2>&1 &
( cd ucx && ./contrib/configure-release --prefix=$P --with-cuda=/usr/local/cuda --without-go --without-java --disable-doxygen-doc --enable-mt --without-gda && { make -j16 -k; make -k install; } ) > $W/ucx.log 2>&1
echo "ucx rc=$? $(( $(date +%s) - T0 ))s"; wait; echo "deps done $(( $(date +%s) - T0 ))s"
tail -n 3 $W/gflags.log $W/absl.log $W/ucx.log
export PKG_CONFIG_PATH=$P/lib/pkgconfig:$P/lib64/pkgconfig LD_LIBRARY_PATH=$P/lib:$P/lib64:$P/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
( cd nixl && meson setup b --prefix=$P --libdir=lib -Dbuildtype=release -Dwerror=false -Ducx_path=$P -Denable_plugins=UCX -Dbuild_tests=false -Dbuild_examples=false -Dwith_trace=false -Dnixl_cuda_arch_list=90 --wrap-mode=nodownload --force-fallback-for=asio && ninja -C b -j16 install ) > $W/nixl.log 2>&1
echo "nixl rc=$? $(( $(date +%s) - T0 ))s"; tail -25 $W/nixl.log
fi  # NIXL_RESUME=1 (a warm machine that built the above already) starts here
cd $W; T0=${T0:-$(date +%s)}; export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PKG_CONFIG_PATH=$P/lib/pkgconfig:$P/lib64/pkgconfig LD_LIBRARY_PATH=$P/lib:$P/lib64:$P/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
rm -rf nixl/benchmark/nixlbench/b  # nixlbench passes asio only to its executable, not to libworker (which includes asio.hpp): the bundled headers go in cpp_args
( cd nixl/benchmark/nixlbench && meson setup b --libdir=lib -Dbuildtype=release -Dwerror=false -Dcpp_args="-I$W/nixl/subprojects/asio-1.30.2/include -DASIO_STANDALONE" -Dnixl_path=$P -Ducx_path=$P -Ducx_device_cuda_arch_list=90 --wrap-mode=nodownload --force-fallback-for=asio && ninja -C b -j16 ) > $W/nixlbench.log 2>&1
echo "nixlbench rc=$? $(( $(date +%s) - T0 ))s"; tail -25 $W/nixlbench.log
B=$W/nixl/benchmark/nixlbench/b/nixlbench
export NIXL_PLUGIN_DIR=$P/lib/plugins
ls $P/lib/plugins $P/lib 2>&1 | head -30
mkdir -p $W/out $W/out/rb
# rdmabench first (the point of this run), then the same commands raw.
if [ -x $B ]; then
  mkdir -p $W/bin; ln -sf $B $W/bin/nixlbench; gunzip -c $R/.work/gpu/rdmabench3.gz > $W/bin/rdmabench; chmod +x $W/bin/rdmabench
  export PATH=$W/bin:$PATH; which nixlbench rdmabench
  T1=$(date +%s)
  ( cd $W && timeout 240 rdmabench run $R/.work/gpu/nixl-single-host.yaml --out $W/rb --run-id gpu3 --html none > $W/out/rb/rdmabench-stdout.txt 2> $W/out/rb/rdmabench-stderr.txt; echo "rdmabench rc=$? $(( $(date +%s) - T1 ))s" | tee -a $W/out/commands.txt )
  cp -r $W/rb/. $W/out/rb/ 2>/dev/null
fi
nb() { # name args...: initiator first (binds the ASIO port: rank 0), then the target
  local n=$1; shift
  echo "== $n: nixlbench $*" >> $W/out/commands.txt
  local t=$(date +%s.%N)
  timeout 60 $B "$@" > $W/out/$n.txt 2>&1 & local p=$!
  sleep 2
  timeout 60 $B "$@" > $W/out/${n}_target.txt 2>&1; echo "$n target rc=$?" | tee -a $W/out/commands.txt
  wait $p; echo "$n initiator rc=$? wall $(awk -v a=$t -v b=$(date +%s.%N) "BEGIN{printf \"%.1f\", b-a}")s" | tee -a $W/out/commands.txt
}
if [ -x $B ]; then
  C="--runtime_type=ASIO --backend=UCX --total_buffer_size=1073741824"
  nb dram_read $C --initiator_seg_type=DRAM --target_seg_type=DRAM --op_type=READ
  nb dram_write $C --initiator_seg_type=DRAM --target_seg_type=DRAM --op_type=WRITE
  nb vram_read $C --initiator_seg_type=VRAM --target_seg_type=VRAM --op_type=READ
  nb vram_write $C --initiator_seg_type=VRAM --target_seg_type=VRAM --op_type=WRITE
fi
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; uname -r; } > $W/out/machine.txt 2>&1
cp $W/*.log $W/out/ 2>/dev/null; $P/bin/ucx_info -v > $W/out/ucx_info.txt 2>&1
tar czf $OUT/nixl.tgz -C $W/out .; ls -la $OUT
