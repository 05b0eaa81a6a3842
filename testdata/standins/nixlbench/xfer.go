package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sort"
	"time"
)

// The data path of the stand-in: NIXL moves bytes by RDMA; the stand-in
// moves the same bytes over its own TCP connection between the two ranks,
// so every figure it prints is a real measurement of that connection.

const (
	opWrite = 'W'
	opRead  = 'R'
	opEnd   = 'E'
)

// target serves one initiator's transfers.
type target struct {
	ln    net.Listener
	conn  net.Conn
	r     *bufio.Reader
	buf   []byte
	check bool
}

func listenTarget(addr string) (*target, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return nil, err
	}
	return &target{ln: ln}, nil
}

func (t *target) accept() error {
	if t.ln == nil || t.conn != nil {
		return nil
	}
	c, err := t.ln.Accept()
	t.ln.Close()
	if err != nil {
		return err
	}
	t.conn, t.r = c, bufio.NewReaderSize(c, 1<<20)
	return nil
}

// serve answers requests until the initiator ends the phase.
func (t *target) serve(pattern byte) error {
	if err := t.accept(); err != nil {
		return err
	}
	hdr := make([]byte, 9)
	for {
		if _, err := io.ReadFull(t.r, hdr); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint64(hdr[1:]))
		if cap(t.buf) < n {
			t.buf = make([]byte, n)
		}
		buf := t.buf[:n]
		switch hdr[0] {
		case opEnd:
			return nil
		case opWrite:
			if _, err := io.ReadFull(t.r, buf); err != nil {
				return err
			}
			if t.check && !allEqual(buf, pattern) {
				return errConsistency
			}
			if _, err := t.conn.Write([]byte{1}); err != nil {
				return err
			}
		case opRead:
			fill(buf, pattern)
			if _, err := t.conn.Write(buf); err != nil {
				return err
			}
		default:
			return errors.New("bad request")
		}
	}
}

var errConsistency = errors.New("Consistency check failed")

func allEqual(b []byte, v byte) bool {
	for _, x := range b {
		if x != v {
			return false
		}
	}
	return true
}

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

// initiator issues transfers to its target.
type initiator struct {
	conn net.Conn
	r    *bufio.Reader
	buf  []byte
}

func dialTarget(addr string) (*initiator, error) {
	c, err := net.DialTimeout("tcp", addr, 25*time.Second)
	if err != nil {
		return nil, err
	}
	return &initiator{conn: c, r: bufio.NewReaderSize(c, 1<<20)}, nil
}

// sample is one transfer's phases.
type sample struct{ prep, post, tx time.Duration }

// run performs iters transfers of batch blocks each, returning per-transfer
// phase times and the total duration.
func (in *initiator) run(op byte, block, batch int64, iters int, pattern byte, check bool) ([]sample, time.Duration, error) {
	n := int(block * batch)
	if cap(in.buf) < n+9 {
		in.buf = make([]byte, n+9)
	}
	out := make([]sample, 0, iters)
	start := time.Now()
	for i := 0; i < iters; i++ {
		t0 := time.Now()
		msg := in.buf[:9]
		msg[0] = op
		binary.BigEndian.PutUint64(msg[1:], uint64(n))
		if op == opWrite {
			msg = in.buf[:9+n]
			fill(msg[9:], pattern)
		}
		t1 := time.Now()
		if _, err := in.conn.Write(msg); err != nil {
			return nil, 0, err
		}
		t2 := time.Now()
		if err := in.complete(op, n, pattern, check); err != nil {
			return nil, 0, err
		}
		t3 := time.Now()
		out = append(out, sample{prep: t1.Sub(t0), post: t2.Sub(t1), tx: t3.Sub(t1)})
	}
	return out, time.Since(start), nil
}

// complete waits for the write's notification or the read's bytes.
func (in *initiator) complete(op byte, n int, pattern byte, check bool) error {
	if op == opWrite {
		_, err := in.r.ReadByte()
		return err
	}
	buf := in.buf[9 : 9+n]
	if _, err := io.ReadFull(in.r, buf); err != nil {
		return err
	}
	if check && !allEqual(buf, pattern) {
		return errConsistency
	}
	return nil
}

func (in *initiator) end() error {
	msg := make([]byte, 9)
	msg[0] = opEnd
	_, err := in.conn.Write(msg)
	return err
}

// summarize turns timed transfers into a table row.
func summarize(block, batch int64, ss []sample, total time.Duration) stats {
	st := stats{block: block, batch: batch}
	if len(ss) == 0 || total <= 0 {
		return st
	}
	bytes := float64(block*batch) * float64(len(ss))
	st.gbps = bytes / 1e9 / total.Seconds()
	st.avgLat = float64(total.Microseconds()) / float64(int64(len(ss))*batch)
	st.avgPrep, st.p99Prep = avgP99(ss, func(s sample) time.Duration { return s.prep })
	st.avgPost, st.p99Post = avgP99(ss, func(s sample) time.Duration { return s.post })
	st.avgTx, st.p99Tx = avgP99(ss, func(s sample) time.Duration { return s.tx })
	return st
}

func avgP99(ss []sample, get func(sample) time.Duration) (avg, p99 float64) {
	vals := make([]float64, len(ss))
	var sum float64
	for i, s := range ss {
		vals[i] = float64(get(s).Nanoseconds()) / 1e3
		sum += vals[i]
	}
	sort.Float64s(vals)
	idx := int(float64(len(vals))*0.99+0.5) - 1
	idx = max(0, min(idx, len(vals)-1))
	return sum / float64(len(vals)), vals[idx]
}
