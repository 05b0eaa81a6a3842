// Package nccl is rdmabench's NCCL probe: it drives the NCCL library the
// serving image already holds (the libnccl.so.2 torch loads, found the way
// vLLM finds it) and the CUDA driver, the way vLLM's pynccl wrapper does,
// with no nccl-tests, no MPI and no sshd. One process per GPU; the ranks of
// a job may be in different pods, and exchange NCCL's unique id through
// rdmabench's etcd.
//
// It measures what nccl-tests measures, defined as nccl-tests defines it
// (src/common.cu BenchTime, src/<collective>.cu GetBw): the average wall
// time of -n back-to-back collectives after a synchronising one, averaged
// over the ranks; algbw = bytes / time, busbw = algbw × the collective's
// factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall
// (n-1)/n; sendrecv, broadcast 1). It prints nccl-tests' text table (the
// same columns and number formats) under a banner of its own, so the NCCL
// parser reads it and report.json says which program measured.
//
// The libraries are opened at run time without cgo (github.com/ebitengine/purego),
// so the probe is one Go binary that runs in any glibc image; it needs the
// image's dynamic loader, which is why it is a binary of its own beside
// the static rdmabench.
package nccl
