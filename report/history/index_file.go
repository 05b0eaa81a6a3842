package history

import (
	"bufio"
	"bytes"
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	json "github.com/go-json-experiment/json"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// The index file, history.idx, beside report.json:
//
//	line 1   JSON: indexHead (schemaVersion, the report.json it was made
//	         from, run metadata, summary, verdict, body length and CRC)
//	body     binary, little-endian varints (encoding/binary):
//	         strings:    n, then n × (length, bytes)
//	         size lists: n, then n × (count, count × varint bytes)
//	         results:    n, then n × (test tool family pair backend op
//	                     variant metric as string numbers, repeat, line rate and
//	                     expect as float64 bits, size list number, one
//	                     float64 per size)
//
// The head reads with any JSON tool (`head -1 history.idx | jq`); the body
// is the figures, 8 bytes each, so a year of a 64-endpoint matrix is 150 MB
// of indexes read in a fraction of a second rather than 4 GB of JSON.
const (
	// IndexFile is the index's name in a run folder.
	IndexFile = "history.idx"
	// IndexVersion is its schema; another version is ignored (and
	// rewritten by history).
	IndexVersion = "rdmabench.io/history-index/v3"
)

// indexHead is the first line of history.idx.
type indexHead struct {
	SchemaVersion string `json:"schemaVersion"`
	// Report is the report.json the index was made from, as it was then:
	// an index whose report.json has another size or time is stale.
	Report  indexSource    `json:"report"`
	Run     schema.RunMeta `json:"run"`
	Summary schema.Summary `json:"summary"`
	Verdict string         `json:"verdict"`
	Body    indexBody      `json:"body"`
}

type indexSource struct {
	Size      int64 `json:"size"`
	ModTimeNs int64 `json:"modTimeNs"`
}

type indexBody struct {
	Bytes int    `json:"bytes"`
	CRC32 uint32 `json:"crc32"`
}

func sourceOf(st fs.FileInfo) indexSource {
	return indexSource{Size: st.Size(), ModTimeNs: st.ModTime().UnixNano()}
}

// WriteIndex writes history.idx beside the report.json at
// reportPath, from r (the report just saved there).
func WriteIndex(reportPath string, r *schema.Report) error {
	st, err := os.Stat(reportPath)
	if err != nil {
		return err
	}
	return writeIndex(reportPath, st, IndexOf(r))
}

// writeIndex writes the index of the report.json at reportPath, which had
// st when it was read, atomically (temp file + rename).
func writeIndex(reportPath string, st fs.FileInfo, idx *RunIndex) error {
	body := encodeIndexBody(idx)
	head, err := stdjson.Marshal(indexHead{SchemaVersion: IndexVersion, Report: sourceOf(st), Run: idx.Run,
		Summary: idx.Summary, Verdict: idx.Verdict, Body: indexBody{Bytes: len(body), CRC32: crc32.ChecksumIEEE(body)}})
	if err != nil {
		return err
	}
	dir := filepath.Dir(reportPath)
	tmp, err := os.CreateTemp(dir, ".history-*.idx")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(append(head, '\n'), body...)); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, IndexFile))
}

// errStale is an index that is absent, of another version, or not that of
// report.json as it is now.
var errStale = errors.New("no current history index")

// readIndexHead reads the head of the index beside reportPath when it is
// current for st (report.json's stat).
func readIndexHead(reportPath string, st fs.FileInfo) (*indexHead, error) {
	f, err := os.Open(filepath.Join(filepath.Dir(reportPath), IndexFile))
	if err != nil {
		return nil, errStale
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 16<<10).ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		line, err = os.ReadFile(f.Name())
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
	}
	if err != nil {
		return nil, errStale
	}
	return parseIndexHead(line, st)
}

func parseIndexHead(line []byte, st fs.FileInfo) (*indexHead, error) {
	var h indexHead
	if err := json.Unmarshal(line, &h); err != nil || h.SchemaVersion != IndexVersion || h.Report != sourceOf(st) {
		return nil, errStale
	}
	return &h, nil
}

// readIndex reads the whole index beside reportPath when it is current
// for st.
func readIndex(reportPath string, st fs.FileInfo) (*RunIndex, error) {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(reportPath), IndexFile))
	if err != nil {
		return nil, errStale
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, errStale
	}
	h, err := parseIndexHead(data[:nl+1], st)
	if err != nil {
		return nil, err
	}
	body := data[nl+1:]
	if len(body) != h.Body.Bytes || crc32.ChecksumIEEE(body) != h.Body.CRC32 {
		return nil, errStale
	}
	idx := &RunIndex{Run: h.Run, Summary: h.Summary, Verdict: h.Verdict}
	if err := decodeIndexBody(body, idx); err != nil {
		return nil, errStale
	}
	return idx, nil
}

// LoadRunIndex is the index of the run whose report.json is at path: read
// from history.idx when that is current, else derived from report.json
// (LoadSlim, IndexOf) and written to history.idx for next time; failing to
// write it is not an error (a read-only archive of runs still reads).
func LoadRunIndex(path string) (*RunIndex, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if idx, err := readIndex(path, st); err == nil {
		return idx, nil
	}
	r, err := LoadSlim(path)
	if err != nil {
		return nil, err
	}
	idx := IndexOf(r)
	_ = writeIndex(path, st, idx) // best effort: the next history reads report.json again
	return idx, nil
}

func encodeIndexBody(idx *RunIndex) []byte {
	strs := map[string]uint64{}
	var table []byte
	nstr := uint64(0)
	str := func(s string) uint64 {
		n, ok := strs[s]
		if !ok {
			n, nstr = nstr, nstr+1
			strs[s] = n
			table = binary.AppendUvarint(table, uint64(len(s)))
			table = append(table, s...)
		}
		return n
	}
	lists := map[string]uint64{}
	var sizes []byte
	nlist := uint64(0)
	list := func(xs []int64) uint64 {
		var enc []byte
		enc = binary.AppendUvarint(enc, uint64(len(xs)))
		for _, x := range xs {
			enc = binary.AppendVarint(enc, x)
		}
		n, ok := lists[string(enc)]
		if !ok {
			n, nlist = nlist, nlist+1
			lists[string(enc)] = n
			sizes = append(sizes, enc...)
		}
		return n
	}
	var res []byte
	res = binary.AppendUvarint(res, uint64(len(idx.Results)))
	for i := range idx.Results {
		r := &idx.Results[i]
		for _, s := range []string{r.Test, r.Tool, string(r.Family), r.Pair, r.Backend, r.Op, r.Variant, string(r.Metric)} {
			res = binary.AppendUvarint(res, str(s))
		}
		res = binary.AppendUvarint(res, uint64(r.Repeat))
		res = binary.LittleEndian.AppendUint64(res, math.Float64bits(r.LineRateBps))
		res = binary.LittleEndian.AppendUint64(res, math.Float64bits(r.Expect))
		res = binary.AppendUvarint(res, list(r.Sizes))
		for _, v := range r.Values {
			res = binary.LittleEndian.AppendUint64(res, math.Float64bits(v))
		}
	}
	out := binary.AppendUvarint(nil, nstr)
	out = append(out, table...)
	out = binary.AppendUvarint(out, nlist)
	out = append(out, sizes...)
	return append(out, res...)
}

// bodyReader decodes an index body; the first error sticks and every
// read after it returns zero.
type bodyReader struct {
	b   []byte
	err error
}

var errCorrupt = errors.New("corrupt history index")

func (r *bodyReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *bodyReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length that must fit in what is left (each item takes at
// least min bytes), so a corrupt length cannot allocate gigabytes.
func (r *bodyReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/min) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *bodyReader) f64() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *bodyReader) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
	r.b = nil
}

func decodeIndexBody(body []byte, idx *RunIndex) error {
	r := &bodyReader{b: body}
	strs := make([]string, r.count(1))
	for i := range strs {
		n := r.count(1)
		strs[i] = string(r.b[:n])
		r.b = r.b[n:]
	}
	lists := make([][]int64, r.count(1))
	for i := range lists {
		xs := make([]int64, r.count(1))
		for j := range xs {
			xs[j] = r.varint()
		}
		lists[i] = xs
	}
	str := func() string {
		if n := r.uvarint(); n < uint64(len(strs)) {
			return strs[n]
		}
		r.fail()
		return ""
	}
	idx.Results = make([]IndexedResult, r.count(10+16+1))
	var values []float64 // one allocation for most of the run's figures
	for i := range idx.Results {
		ir := &idx.Results[i]
		ir.Test, ir.Tool, ir.Family = str(), str(), parsers.Family(str())
		ir.Pair, ir.Backend, ir.Op, ir.Variant, ir.Metric = str(), str(), str(), str(), parsers.Metric(str())
		ir.Repeat = int(r.uvarint())
		ir.LineRateBps, ir.Expect = r.f64(), r.f64()
		if n := r.uvarint(); n < uint64(len(lists)) {
			ir.Sizes = lists[n]
		} else {
			r.fail()
		}
		if len(ir.Sizes) > len(r.b)/8 {
			r.fail() // fewer figures left than sizes
			return r.err
		}
		if len(values) < len(ir.Sizes) {
			// no more than the figures left in the body: a corrupt count
			// cannot allocate more than the file holds
			values = make([]float64, max(len(ir.Sizes), min(len(ir.Sizes)*(len(idx.Results)-i), len(r.b)/8)))
		}
		ir.Values, values = values[:len(ir.Sizes):len(ir.Sizes)], values[len(ir.Sizes):]
		for j := range ir.Values {
			ir.Values[j] = r.f64()
		}
		if r.err != nil {
			return r.err
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	return r.err
}
