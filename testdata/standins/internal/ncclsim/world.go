package ncclsim

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// world is this process as one MPI rank (mpirun -np N …, -g 1), the way an
// MPI build of nccl-tests runs: rank and size from Open MPI's
// OMPI_COMM_WORLD_* variables, a bootstrap at NCCL_COMM_ID (host:port of
// the root, rank 0, as NCCL's own bootstrap), then one TCP connection
// between every pair of ranks that carries the collective's bytes. The
// times are what those socket transfers took.
type world struct {
	c          *coll
	rank, size int
	peers      []net.Conn // by rank; nil for self
	infos      []device
	send, recv []float32
	scratch    []float32
	tmp        []float32
}

// hello is what a rank tells the root; table what the root answers.
type hello struct {
	Rank, Pid, Dev int
	Host           string
	Port           int // the rank's own listener, for ranks above it
}

type peer struct {
	Rank, Pid, Dev int
	Host, Addr     string
}

const bootstrapTimeout = 60 * time.Second

// joinWorld bootstraps the ranks over TCP.
func joinWorld(c *coll, size int) (*world, error) {
	rank, err := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	if err != nil || rank < 0 || rank >= size {
		return nil, fmt.Errorf("OMPI_COMM_WORLD_RANK %q is not a rank of %d", os.Getenv("OMPI_COMM_WORLD_RANK"), size)
	}
	id := os.Getenv("NCCL_COMM_ID")
	host, port, err := net.SplitHostPort(id)
	if err != nil {
		return nil, fmt.Errorf("NCCL_COMM_ID %q: want host:port of rank 0 (%v)", id, err)
	}
	dev, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_LOCAL_RANK"))
	hn, _ := os.Hostname()
	me := hello{Rank: rank, Pid: os.Getpid(), Dev: dev, Host: hn}
	w := &world{c: c, rank: rank, size: size, peers: make([]net.Conn, size)}
	deadline := time.Now().Add(bootstrapTimeout)
	if rank == 0 {
		err = w.root(net.JoinHostPort("", port), me, deadline)
	} else {
		err = w.join(net.JoinHostPort(host, port), me, deadline)
	}
	if err != nil {
		w.close()
		return nil, err
	}
	for _, p := range w.peers {
		if p != nil {
			_ = p.SetDeadline(time.Time{})
		}
	}
	return w, nil
}

// root accepts every other rank, then sends each the table of ranks (the
// address of a rank is where its bootstrap connection came from).
func (w *world) root(addr string, me hello, deadline time.Time) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	_ = ln.(*net.TCPListener).SetDeadline(deadline)
	table := make([]peer, w.size)
	table[0] = peer{Rank: 0, Pid: me.Pid, Dev: me.Dev, Host: me.Host}
	for n := 1; n < w.size; n++ {
		conn, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("rank 0 waiting for %d more ranks at %s: %w", w.size-n, addr, err)
		}
		_ = conn.SetDeadline(deadline)
		var h hello
		if err := readJSON(conn, &h); err != nil || h.Rank <= 0 || h.Rank >= w.size || w.peers[h.Rank] != nil {
			conn.Close()
			return fmt.Errorf("bad hello from %s: %+v %v", conn.RemoteAddr(), h, err)
		}
		ip, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
		w.peers[h.Rank] = conn
		table[h.Rank] = peer{Rank: h.Rank, Pid: h.Pid, Dev: h.Dev, Host: h.Host, Addr: net.JoinHostPort(ip, strconv.Itoa(h.Port))}
	}
	data, _ := json.Marshal(table)
	for _, p := range w.peers[1:] {
		if _, err := p.Write(append(data, '\n')); err != nil {
			return err
		}
	}
	w.setInfos(table)
	return nil
}

// join says hello to the root, reads the table, dials every rank below it
// (but the root) and accepts every rank above it.
func (w *world) join(root string, me hello, deadline time.Time) error {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return err
	}
	defer ln.Close()
	_ = ln.(*net.TCPListener).SetDeadline(deadline)
	me.Port = ln.Addr().(*net.TCPAddr).Port
	conn, err := dialRetry(root, deadline)
	if err != nil {
		return fmt.Errorf("rank %d to the root at %s: %w", w.rank, root, err)
	}
	w.peers[0] = conn
	data, _ := json.Marshal(me)
	if _, err := conn.Write(append(data, '\n')); err != nil {
		return err
	}
	var table []peer
	if err := readJSON(conn, &table); err != nil || len(table) != w.size {
		return fmt.Errorf("rank %d: table from the root: %v", w.rank, err)
	}
	w.setInfos(table)
	for r := 1; r < w.rank; r++ {
		c, err := dialRetry(table[r].Addr, deadline)
		if err != nil {
			return fmt.Errorf("rank %d to rank %d at %s: %w", w.rank, r, table[r].Addr, err)
		}
		w.peers[r] = c
		if err := binary.Write(c, binary.LittleEndian, int32(w.rank)); err != nil {
			return err
		}
	}
	for n := w.rank + 1; n < w.size; n++ {
		c, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("rank %d waiting for rank(s) above it: %w", w.rank, err)
		}
		var r int32
		if err := binary.Read(c, binary.LittleEndian, &r); err != nil || int(r) <= w.rank || int(r) >= w.size || w.peers[r] != nil {
			c.Close()
			return fmt.Errorf("rank %d: bad peer rank %d: %v", w.rank, r, err)
		}
		w.peers[r] = c
	}
	return nil
}

// readJSON reads one line, byte by byte so that nothing after it is
// taken from the connection, and decodes it.
func readJSON(r io.Reader, v any) error {
	var line []byte
	b := make([]byte, 1)
	for {
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		if b[0] == '\n' {
			return json.Unmarshal(line, v)
		}
		line = append(line, b[0])
	}
}

func dialRetry(addr string, deadline time.Time) (net.Conn, error) {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Until(deadline))
		if err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetNoDelay(true)
			}
			return c, nil
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (w *world) setInfos(table []peer) {
	w.infos = make([]device, len(table))
	for i, p := range table {
		w.infos[i] = device{pid: p.Pid, host: p.Host, dev: p.Dev}
	}
}

func (w *world) close() {
	for _, p := range w.peers {
		if p != nil {
			p.Close()
		}
	}
}

func (w *world) devices() []device { return w.infos }

// alloc sizes this rank's buffers for the largest size.
func (w *world) alloc(maxBytes, ws int64) {
	count, _ := w.c.counts(maxBytes, w.size, ws)
	n := words(count*int64(w.size), ws) + 4
	w.send, w.recv, w.scratch, w.tmp = make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
}

func bytesOf(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(f)*4)
}

// exchange writes out to rank to and reads in from rank from, at once.
func (w *world) exchange(to int, out []float32, from int, in []float32) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.must(writeFull(w.peers[to], bytesOf(out))) }()
	_, err := io.ReadFull(w.peers[from], bytesOf(in))
	w.must(err)
	wg.Wait()
}

func writeFull(c net.Conn, b []byte) error { _, err := c.Write(b); return err }

// must ends the rank on a broken connection (a peer died): as NCCL's
// bootstrap and proxies abort, mpirun then ends the job.
func (w *world) must(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: NCCL failure: socket: %v\n", w.rank, err)
		os.Exit(3)
	}
}

// op runs the collective once: sendrecv to the next rank, alltoall chunk
// j to rank j, all_reduce as a ring reduce-scatter then all-gather.
func (w *world) op(count, ws int64, inPlace bool) {
	n, r := w.size, w.rank
	total := words(count, ws)
	switch w.c.name {
	case "sendrecv":
		src, dst := w.send[:total], w.recv[:total]
		if inPlace {
			copy(w.scratch, src)
			src, dst = w.scratch[:total], w.send[:total]
		}
		w.exchange((r+1)%n, src, (r-1+n)%n, dst)
	case "alltoall":
		src, dst := w.send, w.recv
		if inPlace {
			copy(w.scratch[:total*n], w.send[:total*n])
			src, dst = w.scratch, w.send
		}
		copy(dst[r*total:(r+1)*total], src[r*total:(r+1)*total])
		var wg sync.WaitGroup
		for j := 0; j < n; j++ {
			if j == r {
				continue
			}
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				w.must(writeFull(w.peers[j], bytesOf(src[j*total:(j+1)*total])))
			}(j)
			wg.Add(1)
			go func(j int) {
				defer wg.Done()
				_, err := io.ReadFull(w.peers[j], bytesOf(dst[j*total:(j+1)*total]))
				w.must(err)
			}(j)
		}
		wg.Wait()
	case "all_reduce":
		buf := w.send[:total]
		if !inPlace {
			copy(w.recv[:total], buf)
			buf = w.recv[:total]
		}
		w.ringAllReduce(buf)
	}
}

func (w *world) ringAllReduce(buf []float32) {
	n, r := w.size, w.rank
	next, prev := (r+1)%n, (r-1+n)%n
	lo := func(k int) int { return k * len(buf) / n }
	chunk := func(k int) []float32 { k = ((k % n) + n) % n; return buf[lo(k):lo(k+1)] }
	for s := 0; s < n-1; s++ { // reduce-scatter
		out, in := chunk(r-s), chunk(r-s-1)
		tmp := w.tmp[:len(in)]
		w.exchange(next, out, prev, tmp)
		for i := range in {
			in[i] += tmp[i]
		}
	}
	for s := 0; s < n-1; s++ { // all-gather
		w.exchange(next, chunk(r+1-s), prev, chunk(r-s))
	}
}

// validate fills this rank's send buffer, runs once, counts this rank's
// wrong words and sums them at rank 0.
func (w *world) validate(count, ws int64, inPlace bool) int64 {
	total, chunk := words(count, ws), words(count, ws)
	if w.c.name == "alltoall" {
		total *= w.size
	}
	for i := 0; i < total; i++ {
		w.send[i] = w.c.init(w.rank, i, chunk, w.size)
		w.recv[i] = -1
	}
	w.op(count, ws, inPlace)
	got := w.recv
	if inPlace {
		got = w.send
	}
	var wrong int64
	for i := 0; i < total; i++ {
		if got[i] != w.c.expect(w.rank, i, chunk, w.size) {
			wrong++
		}
	}
	return int64(w.gatherSum(float64(wrong)))
}

// gatherSum adds every rank's v at rank 0 (others get their own back).
func (w *world) gatherSum(v float64) float64 {
	if w.rank != 0 {
		w.must(binary.Write(w.peers[0], binary.LittleEndian, math.Float64bits(v)))
		return v
	}
	sum := v
	for _, p := range w.peers[1:] {
		var b uint64
		w.must(binary.Read(p, binary.LittleEndian, &b))
		sum += math.Float64frombits(b)
	}
	return sum
}

func (w *world) avgSeconds(sec float64) float64 { return w.gatherSum(sec) / float64(w.size) }

// barrier: every rank tells rank 0, which then releases them all.
func (w *world) barrier() {
	one := []byte{1}
	if w.rank != 0 {
		w.must(writeFull(w.peers[0], one))
		_, err := io.ReadFull(w.peers[0], one)
		w.must(err)
		return
	}
	for _, p := range w.peers[1:] {
		_, err := io.ReadFull(p, one)
		w.must(err)
	}
	for _, p := range w.peers[1:] {
		w.must(writeFull(p, one))
	}
}
