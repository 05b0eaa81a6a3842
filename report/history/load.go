package history

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
)

// A year of nightly runs of a 64-endpoint all-to-all is 365 report.json
// files of about 11 MB each. encoding/json decodes one in about half a
// second here, so history reads them with the faster encoding/json/v2
// prototype (github.com/go-json-experiment/json), decodes only the fields a
// history needs (slimReport), and spreads the files over every core.

// ReportFile is one report.json found under a history folder, with the run
// metadata read from its head.
type ReportFile struct {
	Path string
	Run  schema.RunMeta
}

// FindReports walks dirs (recursively) for run folders: folders holding a
// report.json. A file given directly is taken as a report.json. Folders
// without one are skipped silently; a report.json that is not a report
// (unreadable, not JSON, another schema) is returned as a warning naming the
// file, never a panic or a failed walk. The result is in chronological order
// (run start, then path).
func FindReports(dirs []string) ([]ReportFile, []error) {
	var paths []string
	var problems []error
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", d, errors.Unwrap(err)))
			continue
		}
		if !st.IsDir() {
			paths = append(paths, d)
			continue
		}
		err = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: %w (skipped)", p, errors.Unwrap(err)))
				if e != nil && e.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !e.IsDir() && e.Name() == "report.json" {
				paths = append(paths, p)
			}
			return nil
		})
		if err != nil {
			problems = append(problems, err)
		}
	}
	files := make([]ReportFile, 0, len(paths))
	seen := map[string]bool{}
	runs := map[string]string{} // run id and start → the path it was first read from
	for _, p := range paths {
		if seen[absOr(p)] { // a folder given twice, or inside another given
			continue
		}
		seen[absOr(p)] = true
		meta, err := readRunHead(p)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		id := meta.ID + "\x00" + meta.Start.UTC().String()
		if first, ok := runs[id]; ok && meta.ID != "" {
			problems = append(problems, fmt.Errorf("%s: the same run as %s (%s, a copy?): counted once", p, first, meta.ID))
			continue
		}
		runs[id] = p
		files = append(files, ReportFile{Path: p, Run: meta})
	}
	sort.SliceStable(files, func(i, j int) bool {
		a, b := files[i].Run.Start, files[j].Run.Start
		if !a.Equal(b) {
			return a.Before(b)
		}
		return files[i].Path < files[j].Path
	})
	return files, problems
}

// readRunHead is the run metadata of the report.json at path: from the head
// of its history.idx when that is current, else from report.json's head.
func readRunHead(path string) (schema.RunMeta, error) {
	if st, err := os.Stat(path); err == nil {
		if h, err := readIndexHead(path, st); err == nil {
			return h.Run, nil
		}
	}
	return readReportHead(path)
}

// readReportHead reads schemaVersion and run from the start of a
// report.json and stops there: report.Save writes them first.
func readReportHead(path string) (schema.RunMeta, error) {
	var meta schema.RunMeta
	f, err := os.Open(path)
	if err != nil {
		return meta, fmt.Errorf("%s: %w (skipped)", path, errors.Unwrap(err))
	}
	defer f.Close()
	dec := jsontext.NewDecoder(f, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	bad := func(err error) (schema.RunMeta, error) {
		return meta, fmt.Errorf("%s: not a report.json (%v); skipped — rewrite it with `rdmabench report` or remove it", path, err)
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		if err == nil {
			err = fmt.Errorf("want a JSON object, found %s", tok.Kind())
		}
		return bad(err)
	}
	var version string
	haveRun := false
	for dec.PeekKind() != '}' && (version == "" || !haveRun) {
		tok, err := dec.ReadToken()
		if err != nil {
			return bad(err)
		}
		switch tok.String() {
		case "schemaVersion":
			err = json.UnmarshalDecode(dec, &version)
		case "run":
			err, haveRun = json.UnmarshalDecode(dec, &meta), true
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return bad(err)
		}
	}
	if err := schema.CheckVersion(path, version); err != nil {
		return meta, fmt.Errorf("%w; skipped", err)
	}
	if !haveRun {
		return meta, fmt.Errorf("%s: report.json without a run object; skipped", path)
	}
	return meta, nil
}

// slimReport is the part of report.json a history reads.
type slimReport struct {
	SchemaVersion string         `json:"schemaVersion"`
	Run           schema.RunMeta `json:"run"`
	Results       []slimResult   `json:"results"`
	Summary       schema.Summary `json:"summary"`
}

type slimResult struct {
	Test        string         `json:"test"`
	Tool        string         `json:"tool"`
	Family      parsers.Family `json:"family"`
	Metric      parsers.Metric `json:"metric"`
	Variant     string         `json:"variant"`
	Backend     string         `json:"backend"`
	Op          string         `json:"op"`
	From        string         `json:"from"`
	To          string         `json:"to"`
	Ranks       []string       `json:"ranks"`
	NRanks      int            `json:"n_ranks"`
	MoELayers   int            `json:"moeLayers"`
	Retest      int            `json:"retest"`
	Samples     []slimSample   `json:"samples"`
	Repetitions []struct {
		OK      bool         `json:"ok"`
		Samples []slimSample `json:"samples"`
	} `json:"repetitions"`
	Stats       []schema.SizeStats `json:"stats"`
	BestBps     float64            `json:"bestBps"`
	BestBytes   int64              `json:"bestBytes"`
	LineRate    *schema.LineRate   `json:"lineRate"`
	Efficiency  *float64           `json:"efficiencyPct"`
	Expectation string             `json:"expectation"`
	Verdict     string             `json:"verdict"`
}

type slimSample struct {
	Bytes        int64    `json:"bytes"`
	BWAvgBps     *float64 `json:"bw_avg_bps"`
	BusBWBps     *float64 `json:"busbw_bps"`
	LatAvgUS     *float64 `json:"lat_avg_us"`
	LatTypicalUS *float64 `json:"lat_typical_us"`
	// Batch, Phase and Rank name a DeepEP probe's row (the EP budget
	// compare judges reads them).
	Batch int64  `json:"batch"`
	Phase string `json:"phase"`
	Rank  *int   `json:"rank"`
}

func (s slimSample) sample() parsers.Sample {
	return parsers.Sample{Bytes: s.Bytes, BWAvgBps: s.BWAvgBps, BusBWBps: s.BusBWBps, LatAvgUS: s.LatAvgUS, LatTypicalUS: s.LatTypicalUS,
		Batch: s.Batch, Phase: s.Phase, Rank: s.Rank}
}

func samplesOf(ss []slimSample) []parsers.Sample {
	out := make([]parsers.Sample, len(ss))
	for i, s := range ss {
		out[i] = s.sample()
	}
	return out
}

// LoadSlim reads the part of a report.json that history and the automatic
// baseline need: the run, the summary, and each result's identity,
// figures, line rate, expectation and verdict (no raw outputs, commands,
// endpoints or transport evidence). Errors name the file.
func LoadSlim(path string) (*schema.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeSlim(path, f)
}

func decodeSlim(path string, r io.Reader) (*schema.Report, error) {
	var s slimReport
	if err := json.UnmarshalRead(r, &s, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)); err != nil {
		return nil, fmt.Errorf("%s: not a report.json: %w", path, err)
	}
	if err := schema.CheckVersion(path, s.SchemaVersion); err != nil {
		return nil, err
	}
	rep := &schema.Report{SchemaVersion: s.SchemaVersion, Run: s.Run, Summary: s.Summary, Results: make([]schema.Result, len(s.Results))}
	for i := range s.Results {
		sr := &s.Results[i]
		res := &rep.Results[i]
		*res = schema.Result{Test: sr.Test, Tool: sr.Tool, Family: sr.Family, Metric: sr.Metric, Variant: sr.Variant, Backend: sr.Backend, Op: sr.Op,
			From: sr.From, To: sr.To, Ranks: sr.Ranks, NRanks: sr.NRanks, MoELayers: sr.MoELayers, Samples: samplesOf(sr.Samples), Stats: sr.Stats,
			BestBps: sr.BestBps, BestBytes: sr.BestBytes, LineRate: sr.LineRate, Efficiency: sr.Efficiency,
			Expectation: sr.Expectation, Verdict: sr.Verdict, Retest: sr.Retest}
		for _, rp := range sr.Repetitions {
			res.Repetitions = append(res.Repetitions, schema.Repetition{OK: rp.OK, Samples: samplesOf(rp.Samples)})
		}
	}
	schema.Upgrade(rep)
	return rep, nil
}

// loadedRun is one run's index handed from a loader to the folder.
type loadedRun struct {
	index int
	idx   *RunIndex
	err   error
}

// loadInOrder reads the files' indexes (LoadRunIndex) on every core and
// calls fold for each in the files' order (chronological), holding at most
// a few at a time so that a year of runs never sits in memory at once.
func loadInOrder(files []ReportFile, fold func(i int, idx *RunIndex, err error)) {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(files)))
	window := make(chan struct{}, 2*workers) // decoded but not yet folded
	jobs := make(chan int)
	out := make(chan loadedRun)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				idx, err := LoadRunIndex(files[i].Path)
				out <- loadedRun{i, idx, err}
			}
		}()
	}
	go func() {
		for i := range files {
			window <- struct{}{}
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		close(out)
	}()
	pending := map[int]loadedRun{}
	next := 0
	for lr := range out {
		pending[lr.index] = lr
		for {
			p, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			fold(p.index, p.idx, p.err)
			<-window
			next++
		}
	}
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
