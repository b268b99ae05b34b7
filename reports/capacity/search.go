package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// SLO is a bound on one metric of reports.Metrics: "slowdown.p99 [<100KB]
// <= 10" (completion times, slowdowns: lower is better) or
// "goodput_gbps >= 90".
type SLO struct {
	Metric string  `json:"metric"`           // e.g. "slowdown.p99"
	Bucket string  `json:"bucket,omitempty"` // e.g. "<100KB"; "" all flows
	Op     string  `json:"op"`               // "<=" or ">="
	Limit  float64 `json:"limit"`
}

func (s SLO) String() string {
	return s.metric() + s.Op + strconv.FormatFloat(s.Limit, 'g', -1, 64)
}

// Meets says whether a measured value satisfies the SLO.
func (s SLO) Meets(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if s.Op == ">=" {
		return v >= s.Limit
	}
	return v <= s.Limit
}

// Measure runs the system at load and returns the SLO metric there; Ref is
// where the evidence is (a run archive), kept with the step.
type Measure func(ctx context.Context, load float64) (value float64, ref string, err error)

// Options choose the search. Grid, if set, measures exactly those loads;
// otherwise bisection between Lo and Hi until the bracket is at most Tol
// wide (or MaxSteps measurements).
type Options struct {
	Lo, Hi   float64
	Tol      float64
	MaxSteps int
	Grid     []float64
	// Progress hears about each measurement as it ends; nil is silent.
	Progress func(s Step, done, planned int)
}

// Validate checks the loads: a grid's in (0, 1], else for bisection
// 0 < Lo < Hi <= 1 (a load is a share of the host links' capacity).
func (o Options) Validate() error {
	if len(o.Grid) > 0 {
		for _, l := range o.Grid {
			if !(l > 0 && l <= 1) {
				return fmt.Errorf("capacity: grid load %g is not in (0, 1]", l)
			}
		}
		return nil
	}
	if !(o.Lo > 0 && o.Hi > o.Lo && o.Hi <= 1) {
		return fmt.Errorf("capacity: bisection needs 0 < lo < hi <= 1, got lo %g hi %g", o.Lo, o.Hi)
	}
	return nil
}

// Step is one measured load. Value is the SLO metric there, nil (left
// out of capacity.json) when the run failed or had no such value: a
// failed step is a miss that keeps its error, never a NaN (which JSON
// cannot carry).
type Step struct {
	Load  float64  `json:"load"`
	Value *float64 `json:"value,omitempty"`
	Meets bool     `json:"meets"`
	Ref   string   `json:"ref,omitempty"`
	Err   string   `json:"error,omitempty"`
}

// Measured prints the step's value, or "not measured" with the first
// line of the reason (it goes into table cells and progress lines).
func (s Step) Measured() string {
	if s.Value == nil {
		if s.Err == "" {
			return "not measured"
		}
		reason, _, _ := strings.Cut(s.Err, "\n")
		return "not measured (" + reason + ")"
	}
	return strconv.FormatFloat(*s.Value, 'g', 4, 64)
}

// Result is the answer and the curve.
type Result struct {
	SLO SLO `json:"slo"`
	// Best is the highest measured load that meets the SLO (0 and Found
	// false if even the lowest did not). With bisection the true limit
	// lies in [Best, FirstMiss).
	Best      float64 `json:"best_load"`
	Found     bool    `json:"found"`
	FirstMiss float64 `json:"first_miss,omitempty"` // lowest measured load that missed (0: none)
	Steps     []Step  `json:"steps"`                // by load
	Method    string  `json:"method"`               // bisect | grid
	// NonMonotonic is set when a load met the SLO above one that missed
	// it: the curve is noisy and bisection's answer is less certain.
	NonMonotonic bool `json:"non_monotonic,omitempty"`
}

// Search measures and returns the highest load meeting the SLO. A failed
// measurement counts as a miss (an overloaded run that does not finish
// does not meet an SLO) and is kept with its error.
func Search(ctx context.Context, m Measure, slo SLO, opt Options) (*Result, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	res := &Result{SLO: slo}
	measure := func(load float64, planned int) (Step, error) {
		if err := ctx.Err(); err != nil {
			return Step{}, err
		}
		v, ref, err := m(ctx, load)
		s := Step{Load: load, Ref: ref, Meets: err == nil && slo.Meets(v)}
		if err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			s.Value = &v
		}
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return s, err
			}
			s.Err = err.Error()
		}
		res.Steps = append(res.Steps, s)
		if opt.Progress != nil {
			opt.Progress(s, len(res.Steps), planned)
		}
		return s, nil
	}
	if len(opt.Grid) > 0 {
		res.Method = "grid"
		grid := append([]float64(nil), opt.Grid...)
		sort.Float64s(grid)
		for _, l := range grid {
			if _, err := measure(l, len(grid)); err != nil {
				return res.finish(), err
			}
		}
		return res.finish(), nil
	}
	res.Method = "bisect"
	tol := opt.Tol
	if tol <= 0 {
		tol = 0.02
	}
	planned := 2 + int(math.Ceil(math.Log2((opt.Hi-opt.Lo)/tol)))
	if opt.MaxSteps > 0 {
		planned = min(planned, opt.MaxSteps)
	}
	lo, err := measure(opt.Lo, planned)
	if err != nil || !lo.Meets {
		return res.finish(), err // even the lowest load misses: nothing to bisect
	}
	hi, err := measure(opt.Hi, planned)
	if err != nil || hi.Meets {
		return res.finish(), err // the SLO holds over the whole range
	}
	a, b := opt.Lo, opt.Hi // a meets, b misses
	for b-a > tol && (opt.MaxSteps <= 0 || len(res.Steps) < opt.MaxSteps) {
		mid := math.Round((a+b)/2*1e6) / 1e6
		s, err := measure(mid, planned)
		if err != nil {
			return res.finish(), err
		}
		if s.Meets {
			a = mid
		} else {
			b = mid
		}
	}
	return res.finish(), nil
}

func (r *Result) finish() *Result {
	sort.SliceStable(r.Steps, func(i, j int) bool { return r.Steps[i].Load < r.Steps[j].Load })
	missed := false
	for _, s := range r.Steps {
		switch {
		case s.Meets && missed:
			r.NonMonotonic = true
		case !s.Meets && !missed:
			missed, r.FirstMiss = true, s.Load
		}
		if s.Meets && (!r.Found || s.Load > r.Best) {
			r.Best, r.Found = s.Load, true
		}
	}
	return r
}
