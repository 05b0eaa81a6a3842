package runner

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
)

var (
	standinOnce sync.Once
	standinDir  string
	standinErr  error
)

// TestMain removes the stand-ins built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if standinDir != "" {
		os.RemoveAll(standinDir)
	}
	os.Exit(code)
}

// standins builds testdata/standins/* once and puts them first on PATH.
func standins(t testing.TB) {
	t.Helper()
	standinOnce.Do(func() {
		standinDir, standinErr = os.MkdirTemp("", "rdmabench-standins-*")
		if standinErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		ents, err := os.ReadDir(filepath.Join(root, "testdata", "standins"))
		if err != nil {
			standinErr = err
			return
		}
		args := []string{"build", "-o", standinDir}
		for _, e := range ents {
			if e.IsDir() && e.Name() != "internal" {
				args = append(args, "./testdata/standins/"+e.Name())
			}
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			standinErr = &buildError{"stand-ins", string(out), err}
			return
		}
		standinErr = writeNvidiaSmi(standinDir)
	})
	if standinErr != nil {
		t.Fatalf("build stand-ins: %v", standinErr)
	}
	t.Setenv("PATH", standinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// writeNvidiaSmi puts an nvidia-smi that lists 8 GPUs beside the
// stand-ins: preflight counts a host's GPUs with nvidia-smi -L, and no
// GPU dooms a GPU test, so the nccl-tests stand-ins run on machines
// without one only where a stand-in says there are GPUs.
func writeNvidiaSmi(dir string) error {
	script := "#!/bin/sh\nfor i in 0 1 2 3 4 5 6 7; do echo \"GPU $i: Stand-in GPU (UUID: GPU-standin-$i)\"; done\n"
	return os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755)
}

type buildError struct {
	name, out string
	err       error
}

func (e *buildError) Error() string { return e.name + ": " + e.err.Error() + "\n" + e.out }

// ncclRows reads nccl-tests rows (size → out-of-place busbw GB/s) and
// the "Avg bus bandwidth" footer, independently of the parsers package.
func ncclRows(r io.Reader) (map[int64]float64, float64, error) {
	rows := map[int64]float64{}
	avg := -1.0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "# Avg bus bandwidth    : "); ok {
			avg, _ = strconv.ParseFloat(strings.Fields(v)[0], 64)
			continue
		}
		f := strings.Fields(line)
		if len(f) != 13 || strings.HasPrefix(line, "#") {
			continue
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		busbw, err2 := strconv.ParseFloat(f[7], 64)
		if err1 == nil && err2 == nil {
			rows[size] = busbw
		}
	}
	if avg < 0 {
		return rows, avg, io.ErrUnexpectedEOF
	}
	return rows, avg, sc.Err()
}

func parseNCCL(r io.Reader) (parsers.Measurement, error) {
	m := parsers.Measurement{Tool: "nccl"}
	rows, avg, err := ncclRows(r)
	if err != nil {
		m.ErrorClass, m.Error = parsers.ClassTruncated, "no Avg bus bandwidth footer"
		return m, nil
	}
	m.OK, m.AvgBusBWBps = true, parsers.F(avg*8e9)
	for s := int64(1); s <= 1<<40; s *= 2 {
		if v, ok := rows[s]; ok {
			m.Samples = append(m.Samples, parsers.Sample{Bytes: s, BusBWBps: parsers.F(v * 8e9)})
		}
	}
	return m, nil
}

// nixlRows reads nixlbench's table rows independently of the parsers
// package: block size and B/W (decimal GB/s).
func nixlRows(r io.Reader) (map[int64]float64, error) {
	rows := map[int64]float64{}
	sc := bufio.NewScanner(r)
	inTable := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Block Size (B)") {
			inTable = true
			continue
		}
		f := strings.Fields(line)
		if !inTable || len(f) != 10 {
			continue
		}
		block, err1 := strconv.ParseInt(f[0], 10, 64)
		gbps, err2 := strconv.ParseFloat(f[2], 64)
		if err1 == nil && err2 == nil {
			rows[block] = gbps
		}
	}
	return rows, sc.Err()
}

func parseNixl(r io.Reader) (parsers.Measurement, error) {
	m := parsers.Measurement{Tool: "nixlbench"}
	rows, err := nixlRows(r)
	if err != nil || len(rows) == 0 {
		m.ErrorClass, m.Error = parsers.ClassNoResults, "no result rows"
		return m, nil
	}
	m.OK = true
	for b := int64(1); b <= 1<<30; b *= 2 {
		if v, ok := rows[b]; ok {
			m.Samples = append(m.Samples, parsers.Sample{Bytes: b, Batch: 1, BWAvgBps: parsers.F(v * 8e9)})
		}
	}
	return m, nil
}
