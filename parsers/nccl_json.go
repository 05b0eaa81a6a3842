package parsers

import (
	"bytes"
	"encoding/json"
	"errors"
	"path"
	"strconv"
	"strings"
)

// ncclJSONVal is any JSON scalar: nccl-tests writes numbers, "nan" strings,
// booleans as "true"/"false" strings, and null for unchecked counts.
type ncclJSONVal struct{ raw json.RawMessage }

var errNCCLJSONScalar = errors.New("expected a scalar, found an object or array")

// UnmarshalJSON keeps the raw scalar; objects and arrays are refused.
func (v *ncclJSONVal) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return errNCCLJSONScalar
	}
	v.raw = append(v.raw[:0], b...)
	return nil
}

func (v ncclJSONVal) num() (float64, bool) {
	s := strings.Trim(strings.TrimSpace(string(v.raw)), `"`)
	return ncclNum(strings.TrimSpace(s))
}

func (v ncclJSONVal) str() string {
	var s string
	if json.Unmarshal(v.raw, &s) == nil {
		return s
	}
	if string(v.raw) == "null" {
		return ""
	}
	return string(v.raw)
}

type ncclJSONDevice struct {
	Rank       ncclJSONVal `json:"rank"`
	Hostname   ncclJSONVal `json:"hostname"`
	DeviceInfo ncclJSONVal `json:"device_info"`
}

type ncclJSONHalf struct {
	Time    ncclJSONVal `json:"time"`
	CPUTime ncclJSONVal `json:"cpu_time"`
	AlgBW   ncclJSONVal `json:"alg_bw"`
	BusBW   ncclJSONVal `json:"bus_bw"`
	NWrong  ncclJSONVal `json:"nwrong"`
}

type ncclJSONResult struct {
	Size       ncclJSONVal   `json:"size"`
	Count      ncclJSONVal   `json:"count"`
	Type       ncclJSONVal   `json:"type"`
	RedOp      ncclJSONVal   `json:"redop"`
	Root       ncclJSONVal   `json:"root"`
	OutOfPlace *ncclJSONHalf `json:"out_of_place"`
	InPlace    *ncclJSONHalf `json:"in_place"`
}

type ncclJSONCheck struct {
	Count     ncclJSONVal `json:"count"`
	Bandwidth ncclJSONVal `json:"bandwidth"`
	Okay      ncclJSONVal `json:"okay"`
}

// ncclJSONFile is the -J schema (JSON_FILE_VERSION 3) as far as it matters.
type ncclJSONFile struct {
	Version     ncclJSONVal `json:"version"`
	Args        []string    `json:"args"`
	NCCLVersion ncclJSONVal `json:"nccl_version"`
	Config      struct {
		NThreads   ncclJSONVal      `json:"nthreads"`
		NGpus      ncclJSONVal      `json:"ngpus"`
		MinBytes   ncclJSONVal      `json:"minimum_bytes"`
		MaxBytes   ncclJSONVal      `json:"maximum_bytes"`
		Iterations ncclJSONVal      `json:"iterations"`
		Validation ncclJSONVal      `json:"validation"`
		Devices    []ncclJSONDevice `json:"devices"`
	} `json:"config"`
	Results     []ncclJSONResult `json:"results"`
	OutOfBounds *ncclJSONCheck   `json:"out_of_bounds"`
	AvgBusBW    *ncclJSONCheck   `json:"average_bus_bandwidth"`
	Errors      []string         `json:"errors"`
	EndTime     ncclJSONVal      `json:"end_time"`
}

// ParseNCCLJSON parses the file nccl-tests writes with -J. The file holds
// one run; a file cut short by a crash is a failed Measurement (truncated),
// never an error.
func ParseNCCLJSON(data []byte) ([]Measurement, error) {
	m := Measurement{Tool: "nccl-tests", Samples: []Sample{}}
	var f ncclJSONFile
	if err := json.Unmarshal(data, &f); err != nil {
		m.ErrorClass, m.Error = ClassUnknownFormat, "nccl-tests -J file is not valid JSON: "+err.Error()
		if strings.Contains(err.Error(), "unexpected end of JSON input") {
			m.ErrorClass, m.Error = ClassTruncated, "nccl-tests -J file ends early (the run crashed or was killed): "+err.Error()
		}
		return []Measurement{m}, nil
	}
	if len(f.Args) > 0 {
		m.Test = strings.TrimSuffix(path.Base(f.Args[0]), "_mpi")
	}
	ncclSetInfo(&m, "json_version", f.Version.str())
	ncclJSONInfo(&m, &f)
	for _, r := range f.Results {
		m.Samples = append(m.Samples, ncclJSONSample(r))
	}
	ncclJSONVerdict(&m, &f)
	return []Measurement{m}, nil
}

// ncclJSONInfo copies the header facts and computes the rank count: the
// file lists one device per process, each running nthreads × ngpus ranks.
func ncclJSONInfo(m *Measurement, f *ncclJSONFile) {
	ncclSetInfo(m, "nccl_library", f.NCCLVersion.str())
	ncclSetInfo(m, "nthreads", f.Config.NThreads.str())
	ncclSetInfo(m, "ngpus", f.Config.NGpus.str())
	ncclSetInfo(m, "min_bytes", f.Config.MinBytes.str())
	ncclSetInfo(m, "max_bytes", f.Config.MaxBytes.str())
	ncclSetInfo(m, "iters", f.Config.Iterations.str())
	ncclSetInfo(m, "validation", f.Config.Validation.str())
	per := 1
	if t, ok := f.Config.NThreads.num(); ok && t >= 1 && t < 1e6 {
		per = int(t)
	}
	if g, ok := f.Config.NGpus.num(); ok && g >= 1 && g < 1e6 {
		per *= int(g)
	}
	procs := len(f.Config.Devices)
	if procs == 0 {
		procs = 1
	}
	m.Ranks = procs * per
	var hosts, gpus []string
	for _, d := range f.Config.Devices {
		hosts = ncclAddUnique(hosts, d.Hostname.str())
		gpus = ncclAddUnique(gpus, d.DeviceInfo.str())
	}
	ncclSetInfo(m, "hosts", strings.Join(hosts, ","))
	ncclSetInfo(m, "gpus", strings.Join(gpus, ","))
}

// ncclJSONSample converts one result object (GB/s → bits/s).
func ncclJSONSample(r ncclJSONResult) Sample {
	var s Sample
	if x, ok := r.Size.num(); ok {
		s.Bytes = int64(x)
	}
	if x, ok := r.Count.num(); ok {
		s.Count = int64(x)
	}
	s.DataType, s.RedOp = r.Type.str(), r.RedOp.str()
	if n, err := strconv.Atoi(strings.TrimSpace(r.Root.str())); err == nil {
		s.Root = &n
	}
	if h := r.OutOfPlace; h != nil {
		s.TimeUS, s.AlgBWBps, s.BusBWBps, s.Wrong = ncclJSONHalfValues(h)
	}
	if h := r.InPlace; h != nil {
		s.InplaceTimeUS, s.InplaceAlgBWBps, s.InplaceBusBWBps, s.InplaceWrong = ncclJSONHalfValues(h)
	}
	return s
}

func ncclJSONHalfValues(h *ncclJSONHalf) (t, alg, bus *float64, wrong *int64) {
	tv := h.Time
	if len(tv.raw) == 0 {
		tv = h.CPUTime
	}
	if x, ok := tv.num(); ok {
		t = F(x)
	}
	if x, ok := h.AlgBW.num(); ok {
		alg = ncclBps(x)
	}
	if x, ok := h.BusBW.num(); ok {
		bus = ncclBps(x)
	}
	if x, ok := h.NWrong.num(); ok {
		n := int64(x)
		wrong = &n
	}
	return
}

// ncclJSONVerdict decides OK from the checks the file records.
func ncclJSONVerdict(m *Measurement, f *ncclJSONFile) {
	for _, e := range f.Errors {
		if e = strings.TrimSpace(e); e != "" && len(m.Warnings) < maxWarnings {
			m.Warnings = append(m.Warnings, e)
		}
	}
	if a := f.AvgBusBW; a != nil {
		if x, ok := a.Bandwidth.num(); ok {
			m.AvgBusBWBps = ncclBps(x)
		}
	}
	wrong := 0
	for _, s := range m.Samples {
		if ncclSampleWrong(s) {
			wrong++
		}
	}
	m.OK = true
	switch {
	case wrong > 0:
		m.ErrorClass, m.Error = ClassDataError, "nccl-tests: nwrong > 0 in "+strconv.Itoa(wrong)+" result(s): data corruption"
	case f.OutOfBounds != nil && f.OutOfBounds.Okay.str() == "false":
		m.ErrorClass, m.Error = ClassDataError, "nccl-tests: out of bounds values: "+f.OutOfBounds.Count.str()
	case f.AvgBusBW != nil && f.AvgBusBW.Okay.str() == "false":
		m.ErrorClass, m.Error = ClassToolError, "nccl-tests: average bus bandwidth "+f.AvgBusBW.Bandwidth.str()+" GB/s FAILED the NCCL_TESTS_MIN_BW check"
	case len(m.Samples) == 0:
		m.ErrorClass, m.Error = ClassNoResults, "nccl-tests -J file holds no results"
	case len(f.EndTime.raw) == 0 && f.AvgBusBW == nil:
		m.ErrorClass, m.Error = ClassTruncated, "nccl-tests -J file has no summary (average_bus_bandwidth/end_time)"
	default:
		return
	}
	m.OK = false
}
