package parsers

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// rpingErrors are rping's failure messages (rping.c) and their meaning.
var rpingErrors = []signature{
	{"No RDMA devices were detected", ClassNoDevice},
	{"failed to create RDMA CM event channel", ClassNoDevice},
	{": No such device", ClassNoDevice},
	{"cma detected device removal", ClassNoDevice},
	{"cma event RDMA_CM_EVENT_REJECTED", ClassConnectionFailed},
	{"cma event RDMA_CM_EVENT_ADDR_ERROR", ClassConnectionFailed},
	{"cma event RDMA_CM_EVENT_ROUTE_ERROR", ClassConnectionFailed},
	{"cma event RDMA_CM_EVENT_CONNECT_ERROR", ClassConnectionFailed},
	{"cma event RDMA_CM_EVENT_UNREACHABLE", ClassConnectionFailed},
	{"waiting for addr/route resolution state", ClassConnectionFailed},
	{"wait for CONNECTED state", ClassConnectionFailed},
	{"connect error", ClassConnectionFailed},
	{"data mismatch!", ClassDataError},
	{"Invalid size", ClassUsageError},
	{"Invalid count", ClassUsageError},
	{"getaddrinfo failed", ClassUsageError},
	{"rping -s [-vVd]", ClassUsageError},
	{"cq completion failed status", ClassToolError},
	{"recv wc error", ClassToolError},
	{"post send error", ClassToolError},
	{"poll error", ClassToolError},
	{"rdma_bind_addr: ", ClassToolError},
	{"rdma_resolve_addr: ", ClassConnectionFailed},
	{"rdma_connect: ", ClassConnectionFailed},
	{"rdma_accept: ", ClassConnectionFailed},
	{"rping client failed", ClassToolError},
	{"rping server failed", ClassToolError},
}

// rpingSide counts one side's pings.
type rpingSide struct {
	pings   int
	next    int  // the ping number expected next
	ordered bool // every ping number followed the previous one
	disc    bool // "DISCONNECT EVENT..." seen
}

// ParseRping reads rping output (client and/or server, with -v and/or -d)
// and returns one Measurement per side that printed ping lines, with Pings
// set to the number of "ping data:" lines. rping prints no figures and no
// summary, so success is: pings counted, no failure message, ping numbers
// in order, and as many as "-C"/"count N" asked for when the output says.
func ParseRping(r io.Reader) ([]Measurement, error) {
	client := &rpingSide{ordered: true}
	server := &rpingSide{ordered: true}
	var errClass ErrorClass
	var errLine string
	want, debug, exchanges, nonEmpty := -1, false, false, false
	sc := newLineScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(stripLogPrefix(CleanLine(sc.Text())))
		if line == "" {
			continue
		}
		nonEmpty = true
		switch {
		case rpingPing(line, "server ping data: ", server):
		case rpingPing(line, "ping data: ", client):
		case strings.HasPrefix(line, "server DISCONNECT EVENT"):
			server.disc = true
		case strings.HasPrefix(line, "client DISCONNECT EVENT"):
			client.disc = true
		case strings.HasPrefix(line, "count "):
			if n, err := strconv.Atoi(strings.TrimPrefix(line, "count ")); err == nil {
				want = n
			}
		case rpingDebugLine(line):
			debug = true
			exchanges = exchanges || strings.HasPrefix(line, "RDMA addr ")
		default:
			if s, ok := matchSignature(line, rpingErrors); ok && errClass == ClassNone {
				errClass, errLine = s.class, line
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading rping output: %w", err)
	}
	var out []Measurement
	for _, s := range []struct {
		name string
		side *rpingSide
	}{{"server", server}, {"client", client}} {
		if s.side.pings > 0 || s.side.disc {
			out = append(out, rpingResult(s.name, s.side, want, errClass, errLine))
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	switch {
	case errClass != ClassNone:
		return []Measurement{failed("rping", errClass, "rping: "+errLine)}, nil
	case !nonEmpty:
		return []Measurement{failed("rping", ClassNoResults,
			"rping printed nothing; run it with -v so that pings can be counted")}, nil
	case debug && exchanges:
		return []Measurement{failed("rping", ClassTruncated,
			"pings ran but were not printed (no -v), and the output ends before the disconnect")}, nil
	case debug:
		return []Measurement{failed("rping", ClassTruncated,
			"output stops before any ping completed (no \"ping data:\" line; a hang?)")}, nil
	}
	return []Measurement{failed("rping", ClassUnknownFormat, "no rping ping lines or messages found")}, nil
}

// rpingPing counts a "ping data: rdma-ping-N: …" line for side.
func rpingPing(line, prefix string, side *rpingSide) bool {
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok || !strings.HasPrefix(rest, "rdma-ping-") {
		return false
	}
	num := rest[len("rdma-ping-"):]
	if i := strings.IndexByte(num, ':'); i > 0 {
		num = num[:i]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n != side.next {
		side.ordered = false
	}
	side.next = n + 1
	side.pings++
	return true
}

// rpingDebugLine recognises -d progress lines (rping's DEBUG_LOG).
func rpingDebugLine(line string) bool {
	for _, p := range []string{"created cm_id", "cma_event type", "rdma_resolve_addr - rdma_resolve_route",
		"created pd", "created qp", "created cq", "created channel", "rping_setup_buffers", "cq_thread started",
		"rdma_bind_addr successful", "rdma_listen", "RDMA addr ", "send completion", "recv completion",
		"ESTABLISHED", "rdma_connect successful", "rmda_connect successful", "verbose", "server", "client"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func rpingResult(side string, s *rpingSide, want int, class ErrorClass, errLine string) Measurement {
	n := s.pings
	m := Measurement{Tool: "rping", OK: true, Side: side, Pings: &n, Samples: []Sample{}}
	switch {
	case class != ClassNone:
		m.OK, m.ErrorClass, m.Error = false, class, "rping: "+errLine
	case !s.ordered:
		m.OK, m.ErrorClass = false, ClassDataError
		m.Error = "ping numbers are not consecutive from rdma-ping-0"
	case want > 0 && n < want:
		m.OK, m.ErrorClass = false, ClassTruncated
		m.Error = fmt.Sprintf("%d of %d pings completed", n, want)
	case n == 0:
		m.OK, m.ErrorClass = false, ClassNoResults
		m.Error = "peer disconnected before any ping completed"
	}
	return m
}
