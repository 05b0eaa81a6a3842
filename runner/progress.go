package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/units"
)

// progress writes the run's progress to stderr: a line per round and per
// finished leg; on a terminal also a live status line of what is running.
type progress struct {
	w       io.Writer
	tty     bool
	rounds  int
	began   time.Time
	mu      sync.Mutex
	running map[string]string // job id → "leg 1/2 rep 1/3"
	live    bool              // a status line is on screen
	// perRound is each test's estimated time per round, left the plan's
	// estimate still ahead (nil: no estimate, no ETA).
	perRound map[string]time.Duration
	left     time.Duration
}

// estimate gives the rounds an ETA: the plan's estimate per test (what
// `plan` prints), spread over its rounds, counted down as they start.
func (p *progress) estimate(stats []plan.TestStats) {
	p.perRound = map[string]time.Duration{}
	for _, st := range stats {
		if st.Rounds > 0 {
			p.perRound[st.Test] = st.Estimate / time.Duration(st.Rounds)
			p.left += st.Estimate
		}
	}
}

func newProgress(w io.Writer, rounds int) *progress {
	p := &progress{w: w, rounds: rounds, began: time.Now(), running: map[string]string{}}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

func (p *progress) elapsed() string {
	return fmt.Sprintf("[%6.1fs]", time.Since(p.began).Seconds())
}

// printf writes a permanent line, clearing the live line first.
func (p *progress) printf(format string, a ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLive()
	fmt.Fprintf(p.w, p.elapsed()+" "+format+"\n", a...)
	p.drawLive()
}

func (p *progress) clearLive() {
	if p.tty && p.live {
		fmt.Fprint(p.w, "\r\033[K")
		p.live = false
	}
}

func (p *progress) drawLive() {
	if !p.tty || len(p.running) == 0 {
		return
	}
	var parts []string
	for id, what := range p.running {
		parts = append(parts, id+" "+what)
	}
	line := p.elapsed() + " running: " + strings.Join(parts, ", ")
	if len(line) > 160 {
		line = line[:157] + "..."
	}
	fmt.Fprint(p.w, line)
	p.live = true
}

func (p *progress) round(i int, r *plan.Round) {
	if p.perRound == nil {
		p.printf("round %d/%d: %s (%d job(s))", i+1, p.rounds, r.Test, len(r.Jobs))
		return
	}
	p.printf("round %d/%d: %s (%d job(s)); about %s left", i+1, p.rounds, r.Test, len(r.Jobs), plan.Human(max(p.left, 0)))
	p.left -= p.perRound[r.Test]
}

func (p *progress) start(job *plan.Job, leg, rep, reps int) {
	if p.w == nil || !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[job.ID] = fmt.Sprintf("leg %d/%d rep %d/%d", leg+1, len(job.Legs), rep+1, reps)
	p.clearLive()
	p.drawLive()
}

// leg prints one finished leg: verdict, headline figure, time, reason.
func (p *progress) leg(res schema.Result) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	delete(p.running, res.JobID)
	p.mu.Unlock()
	what := res.JobID
	if res.Variant != "" {
		what += " [" + res.Variant + "]"
	}
	line := fmt.Sprintf("%-7s %s", res.Verdict, what)
	if fig := headline(res); fig != "" {
		line += "  " + fig
	}
	if res.Seconds > 0 {
		line += fmt.Sprintf("  (%.1fs)", res.Seconds)
	}
	if res.Verdict != schema.VerdictPass && res.Reason != "" {
		line += "  " + firstLine(res.Reason, 200)
	}
	p.printf("%s", line)
}

func (p *progress) done(rep *schema.Report) {
	s := rep.Summary
	state := "done"
	if rep.Run.Interrupted {
		state = "interrupted"
		if rep.Run.Error != "" {
			state += " (" + rep.Run.Error + ")"
		}
	}
	invalid := ""
	if s.Invalid > 0 {
		invalid = fmt.Sprintf(", %d invalid", s.Invalid)
	}
	p.printf("%s: %d result(s): %d pass, %d fail%s, %d error, %d skipped", state, s.Total, s.Pass, s.Fail, invalid, s.Error, s.Skipped)
	if !rep.Run.Interrupted && s.Pass+s.Fail+s.Invalid+s.Error == 0 {
		p.printf("nothing was measured: every test was skipped, each with its reason above")
	}
}

// headline is the result's main figure in words.
func headline(res schema.Result) string {
	if res.BestBps > 0 {
		s := schema.FormatBandwidth(res.Family, res.BestBps)
		if res.BestBytes > 0 {
			s += " @ " + units.FormatSize(res.BestBytes)
		}
		if res.Efficiency != nil {
			s += fmt.Sprintf(" (%.1f%% of line rate)", *res.Efficiency)
		}
		return s
	}
	for _, st := range res.Stats {
		if st.Metric == parsers.MetricLatency {
			return fmt.Sprintf("%.2fus @ %s", st.Mean, units.FormatSize(st.Bytes))
		}
	}
	return ""
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n-3] + "..."
	}
	return s
}
