package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// asioRT is nixlbench's ASIO runtime (src/runtime/asio_runtime.h): exactly
// two processes; the one that binds --asio_address:--asio_port is rank 0,
// the other ("bind/listen error -- using connect() instead") connects and
// is rank 1. Messages are typed frames on that one TCP connection: a
// 32-bit header (type << 24 | size) and the payload, as the real runtime
// frames them; barriers are named id/generation and matched by name.
type asioRT struct {
	rank int
	conn net.Conn
	r    *bufio.Reader
	wmu  sync.Mutex
	gen  int
	// pending holds frames read while waiting for another type.
	pending []asioMsg
}

type asioMsg struct {
	typ  byte
	data []byte
}

const (
	asioInt     = 'i'
	asioString  = 's'
	asioBarrier = 'b'
)

// newAsioRT binds or connects; the real runtime's connect side retries
// for about 25 s.
func newAsioRT(addr string, port int64) (*asioRT, error) {
	hp := net.JoinHostPort(addr, strconv.FormatInt(port, 10))
	if ln, err := net.Listen("tcp", hp); err == nil {
		defer ln.Close()
		if tl, ok := ln.(*net.TCPListener); ok {
			_ = tl.SetDeadline(time.Now().Add(300 * time.Second))
		}
		c, err := ln.Accept()
		if err != nil {
			return nil, err
		}
		return &asioRT{rank: 0, conn: c, r: bufio.NewReader(c)}, nil
	}
	fmt.Println("ASIO runtime bind/listen error -- using connect() instead")
	var last error
	for deadline := time.Now().Add(25 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", hp, 2*time.Second)
		if err == nil {
			return &asioRT{rank: 1, conn: c, r: bufio.NewReader(c)}, nil
		}
		last = err
	}
	return nil, last
}

func (rt *asioRT) send(typ byte, data []byte) error {
	rt.wmu.Lock()
	defer rt.wmu.Unlock()
	var h [4]byte
	binary.LittleEndian.PutUint32(h[:], uint32(typ)<<24|uint32(len(data))&0x00ffffff)
	if _, err := rt.conn.Write(append(h[:], data...)); err != nil {
		return err
	}
	return nil
}

// recv returns the next frame of type typ accepted by ok, keeping others.
func (rt *asioRT) recv(typ byte, ok func([]byte) bool) ([]byte, error) {
	for i, m := range rt.pending {
		if m.typ == typ && ok(m.data) {
			rt.pending = append(rt.pending[:i], rt.pending[i+1:]...)
			return m.data, nil
		}
	}
	for {
		var h [4]byte
		if _, err := io.ReadFull(rt.r, h[:]); err != nil {
			return nil, err
		}
		v := binary.LittleEndian.Uint32(h[:])
		data := make([]byte, v&0x00ffffff)
		if _, err := io.ReadFull(rt.r, data); err != nil {
			return nil, err
		}
		if t := byte(v >> 24); t == typ && ok(data) {
			return data, nil
		} else {
			rt.pending = append(rt.pending, asioMsg{t, data})
		}
	}
}

func (rt *asioRT) getRank() int { return rt.rank }

func (rt *asioRT) barrier(id string) error {
	rt.gen++
	name := id + "/" + strconv.Itoa(rt.gen)
	if err := rt.send(asioBarrier, []byte(name)); err != nil {
		return err
	}
	_, err := rt.recv(asioBarrier, func(d []byte) bool { return string(d) == name })
	return err
}

func (rt *asioRT) sendInt(v, _ int) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(int32(v)))
	return rt.send(asioInt, b[:])
}

func (rt *asioRT) sendChar(data []byte, _ int) error { return rt.send(asioString, data) }

func (rt *asioRT) recvInt(_ int) (int, error) {
	d, err := rt.recv(asioInt, func(d []byte) bool { return len(d) == 4 })
	if err != nil {
		return 0, err
	}
	return int(int32(binary.LittleEndian.Uint32(d))), nil
}

func (rt *asioRT) recvChar(_ int) ([]byte, error) {
	return rt.recv(asioString, func([]byte) bool { return true })
}

func (rt *asioRT) cleanup() { rt.conn.Close() }
