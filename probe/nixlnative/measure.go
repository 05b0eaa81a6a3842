package nixlnative

import (
	"context"
	"fmt"
	"time"
)

// xferSide is one side's descriptor list, prepared.
type xferSide struct{ dlist, handle uintptr }

// prep makes and prepares a descriptor list: one descriptor per block of
// every region, region-major (vLLM's layout: id = region*blocks + block).
func (in *initiator) prep(agentName string, seg string, addrs []uintptr, device int, block int64) (xferSide, error) {
	c := in.lib
	var s xferSide
	if err := check("nixl_capi_create_xfer_dlist", c.createXferDlist(memType(seg), &s.dlist)); err != nil {
		return s, err
	}
	for _, a := range addrs {
		for b := range in.o.blocks {
			if err := check("nixl_capi_xfer_dlist_add_desc", c.xferDlistAddDesc(s.dlist, a+uintptr(int64(b)*block), uintptr(block), uint64(device))); err != nil {
				return s, err
			}
		}
	}
	return s, check("nixl_capi_prep_xfer_dlist", c.prepXferDlist(in.agent, agentName, s.dlist, &s.handle, in.optArgs))
}

func (in *initiator) release(s xferSide) {
	if s.handle != 0 {
		in.lib.releaseXferDlistHandle(in.agent, s.handle)
	}
	if s.dlist != 0 {
		in.lib.destroyXferDlist(s.dlist)
	}
}

// request is one prepared transfer of every descriptor, made once and
// posted again (nixlbench's createXferReq once, its notification with
// every post).
type request struct {
	in           *initiator
	req          uintptr
	post, status boundCall // the request's two calls, bound once
}

func (in *initiator) makeRequest(op int32, local, remote xferSide, ids []int32) (*request, error) {
	r := &request{in: in}
	n := uintptr(len(ids))
	err := check("nixl_capi_make_xfer_req", in.lib.makeXferReq(in.agent, op, local.handle, &ids[0], n, remote.handle, &ids[0], n, &r.req, in.notify))
	r.post, r.status = in.lib.postCall(in.agent, r.req), in.lib.statusCall(in.agent, r.req)
	return r, err
}

func (r *request) free() {
	if r.req != 0 {
		r.in.lib.releaseXferReq(r.in.agent, r.req)
		r.in.lib.destroyXferReq(r.req)
	}
}

// once posts the request and polls it to its end (the warm-up and the
// data check).
func (r *request) once(ctx context.Context) error {
	post, status := r.post, r.status
	s := post.call()
	for polls := 1; s == capiInProg; polls++ {
		s = status.call()
		if polls&0xffff == 0 && ctx.Err() != nil {
			return fmt.Errorf("a transfer still in progress after %d polls: %w", polls, ctx.Err())
		}
	}
	return check("transfer to "+r.in.remote, s)
}

// measure is one row of the table: block-sized descriptors, regions x
// blocks of them a request. The problem is the data check's word.
func (in *initiator) measure(ctx context.Context, tgt *peerInfo, block int64) (problem string, err error) {
	o := in.o
	local, err := in.prep("", o.initiatorSeg, in.mem.addrs, o.device, block)
	defer in.release(local)
	if err != nil {
		return "", err
	}
	remote, err := in.prep(in.remote, o.targetSeg, tgt.Regions, tgt.Device, block)
	defer in.release(remote)
	if err != nil {
		return "", err
	}
	ids := make([]int32, o.regions*o.blocks)
	for i := range ids {
		ids[i] = int32(i)
	}
	if problem, err = in.checkData(ctx, local, remote, ids, block); err != nil {
		return "", err
	}
	req, err := in.makeRequest(opOf(o.op), local, remote, ids)
	defer req.free()
	if err != nil {
		return "", err
	}
	for range o.warmups(block) {
		if err := req.once(ctx); err != nil {
			return "", err
		}
	}
	iters := o.iterations(block)
	stamps, total, err := req.timed(ctx, iters)
	if err != nil {
		return "", err
	}
	printRow(in.out, block, len(ids), iters, stamps, total)
	return problem, nil
}

func opOf(op string) int32 {
	if op == "WRITE" {
		return opWrite
	}
	return opRead
}

// checkData moves one request's data and checks it arrived. READ: the
// target's pattern read into zeros. WRITE: zeros then the pattern written,
// read back into zeros.
func (in *initiator) checkData(ctx context.Context, local, remote xferSide, ids []int32, block int64) (string, error) {
	once := func(op int32) error {
		r, err := in.makeRequest(op, local, remote, ids)
		defer r.free()
		if err != nil {
			return err
		}
		return r.once(ctx)
	}
	if in.o.op == "WRITE" {
		if err := in.mem.zero(); err != nil {
			return "", err
		}
		if err := once(opWrite); err != nil {
			return "", err
		}
		if err := in.mem.fill(); err != nil {
			return "", err
		}
		if err := once(opWrite); err != nil {
			return "", err
		}
	}
	if err := in.mem.zero(); err != nil {
		return "", err
	}
	if err := once(opRead); err != nil {
		return "", err
	}
	bad, err := in.mem.check(block, in.o.blocks)
	if err != nil {
		return "", err
	}
	if in.o.op == "WRITE" {
		if err := in.mem.fill(); err != nil {
			return "", err
		}
	}
	if bad != "" {
		return fmt.Sprintf("%s of %d B blocks: the data did not arrive (%s)", in.o.op, block, bad), nil
	}
	return "", nil
}

// timed is nixlbench's timed loop: post, poll to the end, iters times.
// Three clock readings a request (before the post, after it, at the end:
// the prep span is zero, the request being made once) kept in a slice
// made before the loop; the loop's total is the table's figure.
func (r *request) timed(ctx context.Context, iters int) (stamps []int64, total time.Duration, err error) {
	post, status := r.post, r.status
	stamps = make([]int64, 3*iters)
	base := time.Now()
	for i := 0; i < 3*iters; i += 3 {
		stamps[i] = int64(time.Since(base))
		s := post.call()
		stamps[i+1] = int64(time.Since(base))
		for polls := 1; s == capiInProg; polls++ {
			s = status.call()
			if polls&0xfffff == 0 && ctx.Err() != nil {
				return nil, 0, fmt.Errorf("a transfer still in progress after %d polls: %w", polls, ctx.Err())
			}
		}
		stamps[i+2] = int64(time.Since(base))
		if s != capiSuccess {
			return nil, 0, check("transfer to "+r.in.remote, s)
		}
		if i&0x3ff == 0 && ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
	}
	return stamps, time.Since(base), nil
}
