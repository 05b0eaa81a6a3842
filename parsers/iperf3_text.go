package parsers

import (
	"bufio"
	"bytes"
	"strings"
)

// iperf3RateUnits are the bit-rate units of iperf3's text (1000-based).
var iperf3RateUnits = map[string]float64{
	"bits/sec": 1, "Kbits/sec": 1e3, "Mbits/sec": 1e6, "Gbits/sec": 1e9, "Tbits/sec": 1e12,
}

// parseIperf3Text reads the plain text summary: the receiver line of the
// [SUM] (several streams) or of the one stream.
func parseIperf3Text(data []byte) []Measurement {
	var recv, sent *float64
	var errLine string
	done, nonEmpty, sum := false, false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	var buf [16]string
	for sc.Scan() {
		line := strings.TrimSpace(stripLogPrefix(CleanLine(sc.Text())))
		if line == "" {
			continue
		}
		nonEmpty = true
		switch {
		case strings.HasPrefix(line, "iperf3: error") || strings.HasPrefix(line, "iperf3: interrupt"):
			if errLine == "" {
				errLine = line
			}
			continue
		case line == "iperf Done.":
			done = true
			continue
		}
		fs := splitWS(line, buf[:0])
		if len(fs) < 4 {
			continue
		}
		role := fs[len(fs)-1]
		if role != "receiver" && role != "sender" {
			continue
		}
		isSum := strings.HasPrefix(line, "[SUM]")
		if sum && !isSum {
			continue
		}
		rate := iperf3TextRate(fs)
		if rate == nil {
			continue
		}
		if isSum && !sum {
			sum, recv, sent = true, nil, nil
		}
		if role == "receiver" {
			recv = rate
		} else {
			sent = rate
		}
	}
	m := Measurement{Tool: "iperf3", OK: true, Side: "client", Samples: []Sample{}}
	if sent != nil {
		m.Info = map[string]string{"sender_bps": fmtNum(*sent)}
	}
	switch {
	case errLine != "":
		m = failed("iperf3", iperf3Class(errLine), errLine)
	case recv != nil:
		m.Samples = []Sample{{BWAvgBps: recv}}
		if !done {
			m.OK, m.ErrorClass, m.Error = false, ClassTruncated, "output ends before \"iperf Done.\""
		}
	case !nonEmpty:
		m = failed("iperf3", ClassNoResults, "iperf3 printed nothing")
	default:
		m = failed("iperf3", ClassTruncated, "no receiver summary line: the test did not finish")
	}
	return []Measurement{m}
}

// iperf3TextRate finds "<number> <unit>bits/sec" in a summary line.
func iperf3TextRate(fs []string) *float64 {
	for i := 1; i < len(fs); i++ {
		if scale, ok := iperf3RateUnits[fs[i]]; ok {
			return optFloat(fs[i-1], scale)
		}
	}
	return nil
}
