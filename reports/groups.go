package reports

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Spread is one metric over the repetitions of a group: N repetitions that
// have it, their mean, min, max and sample standard deviation (0 for one).
type Spread struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	StdDev float64 `json:"stddev"`
}

// SpreadOf is the spread of one metric's values over repetitions.
func SpreadOf(vals []float64) Spread {
	s := Spread{N: len(vals)}
	if s.N == 0 {
		return s
	}
	s.Min, s.Max = vals[0], vals[0]
	var sum float64
	for _, v := range vals {
		sum += v
		s.Min, s.Max = math.Min(s.Min, v), math.Max(s.Max, v)
	}
	s.Mean = sum / float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, v := range vals {
			ss += (v - s.Mean) * (v - s.Mean)
		}
		s.StdDev = math.Sqrt(ss / float64(s.N-1))
	}
	return s
}

// DefaultNoiseSigma is how many standard errors of the difference of two
// means a difference must exceed to be more than noise (the default of
// regress's noise_sigma).
const DefaultNoiseSigma = 2.0

// Noise is sigma standard errors of the difference of the means of a and
// b, from the sample standard deviations of their repetitions:
//
//	sigma x sqrt(sd_a^2 / n_a + sd_b^2 / n_b)
//
// A side with one repetition has no measured spread and adds nothing.
// Comparison sentences and regress verdicts both judge noise by it.
func Noise(sigma float64, a, b Spread) float64 {
	v := 0.0
	for _, s := range []Spread{a, b} {
		if s.N > 0 {
			v += s.StdDev * s.StdDev / float64(s.N)
		}
	}
	return sigma * math.Sqrt(v)
}

// Group is the points that share every parameter but the repetition: a
// scheme at one load, workload and setting. Failed points are counted,
// not averaged.
type Group struct {
	Key string `json:"key"`
	// Condition is the key without the scheme: groups of one condition
	// are compared with each other.
	Condition    string         `json:"condition"`
	Params       map[string]any `json:"params,omitempty"`
	Scheme       string         `json:"scheme,omitempty"`
	Workload     string         `json:"workload,omitempty"`
	Load         float64        `json:"load,omitempty"`
	Points       []string       `json:"points"`
	OK           int            `json:"ok_points"`
	FailedPoints int            `json:"failed_points"`
	// BySize is "all" flows first, then each size bucket.
	BySize         []GroupBucket     `json:"by_size"`
	GoodputGbps    Spread            `json:"goodput_gbps"`
	AchievedLoad   Spread            `json:"achieved_load"`
	PFCPausePerS   Spread            `json:"pfc_pause_tx_per_s"`
	PFCTierPerS    map[string]Spread `json:"pfc_pause_tx_per_s_by_tier,omitempty"`
	ECNMarksPerS   Spread            `json:"ecn_marks_per_s"`
	PeakQueueBytes Spread            `json:"peak_queue_bytes"`
	MeanQueueBytes Spread            `json:"mean_queue_bytes"`
	OutOfOrder     Spread            `json:"out_of_order_packets"` // N = 0: n/a
}

// GroupBucket is the FCT (ns) and slowdown of one size bucket over a
// group's repetitions.
type GroupBucket struct {
	Bucket  string `json:"bucket"`
	Flows   int    `json:"flows"` // completed flows, all repetitions
	FCTMean Spread `json:"fct_mean_ns"`
	FCTP99  Spread `json:"fct_p99_ns"`
	// FCTP999 and FCTMax are the tail: the papers' tail and max FCT.
	FCTP999      Spread `json:"fct_p999_ns"`
	FCTMax       Spread `json:"fct_max_ns"`
	SlowdownMean Spread `json:"slowdown_mean"`
	SlowdownP99  Spread `json:"slowdown_p99"`
}

// Comparison is one line of the papers' tables: Scheme against Baseline
// on one metric at one condition. ReductionPct = (baseline - value) /
// baseline x 100, over the groups' means; positive means Scheme is better
// (lower). Ratio = baseline / value.
type Comparison struct {
	Condition     string  `json:"condition"`
	Workload      string  `json:"workload,omitempty"`
	Load          float64 `json:"load,omitempty"`
	Scheme        string  `json:"scheme"`
	Baseline      string  `json:"baseline"`
	Metric        string  `json:"metric"` // avg FCT | p99 FCT | avg slowdown | p99 slowdown
	Bucket        string  `json:"bucket"` // all or a size bucket
	Value         float64 `json:"value"`
	BaselineValue float64 `json:"baseline_value"`
	ReductionPct  float64 `json:"reduction_pct"`
	Ratio         float64 `json:"ratio"`
	// N and BaselineN are the repetitions behind each mean; Noise is the
	// noise allowance of the difference (Noise with DefaultNoiseSigma), and
	// WithinNoise says the difference is no larger than it.
	N           int     `json:"n"`
	BaselineN   int     `json:"baseline_n"`
	Noise       float64 `json:"noise"`
	WithinNoise bool    `json:"within_noise"`
	Sentence    string  `json:"sentence"`
}

var repSuffix = regexp.MustCompile(`/rep\d+$`)

// repetitionParam says whether a Params key only tells repetitions apart.
func repetitionParam(k string) bool { return k == ParamRepetition || k == ParamSeed }

// GroupKeys are a point's group key and condition key: its Params but the
// repetition (the scheme added when it came from elsewhere), or for a
// point without Params its name without the "/rep<N>" suffix.
func GroupKeys(p PointSummary) (key, cond string) {
	kv := map[string]string{}
	for k, v := range p.Params {
		if !repetitionParam(k) {
			kv[k] = fmt.Sprint(v)
		}
	}
	delete(kv, ParamScheme)
	if len(kv) == 0 {
		kv["point"] = repSuffix.ReplaceAllString(p.Name, "")
	}
	var parts []string
	for k, v := range kv {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	cond = strings.Join(parts, " ")
	key = cond
	if p.Scheme != "" {
		key = "scheme=" + p.Scheme + " " + cond
	}
	return key, cond
}

// across fills the summary's groups and comparisons from its points.
func (a Analyser) across(s *Summary) error {
	s.Groups = groups(s.Points)
	var err error
	if s.Baseline, err = baseline(s.Groups, a.BaselineScheme); err != nil {
		return err
	}
	s.Comparisons = compareGroups(s.Groups, s.Baseline)
	return nil
}

func groups(points []PointSummary) []Group {
	var out []*Group
	members := map[string][]PointSummary{}
	byKey := map[string]*Group{}
	for _, p := range points {
		key, cond := GroupKeys(p)
		g, ok := byKey[key]
		if !ok {
			params := map[string]any{}
			for k, v := range p.Params {
				if !repetitionParam(k) {
					params[k] = v
				}
			}
			if len(params) == 0 {
				params = nil
			}
			g = &Group{Key: key, Condition: cond, Params: params, Scheme: p.Scheme, Workload: p.Workload, Load: p.Load}
			byKey[key] = g
			out = append(out, g)
		}
		name := p.Name
		if p.Run != "" {
			name = p.Run + "/" + p.Name
		}
		g.Points = append(g.Points, name)
		if p.Status == StatusFailed {
			g.FailedPoints++
			continue
		}
		g.OK++
		members[key] = append(members[key], p)
	}
	res := make([]Group, len(out))
	for i, g := range out {
		g.aggregate(members[g.Key])
		res[i] = *g
	}
	return res
}

func (g *Group) aggregate(ps []PointSummary) {
	collect := func(f func(PointSummary) (float64, bool)) Spread {
		var vals []float64
		for _, p := range ps {
			if v, ok := f(p); ok {
				vals = append(vals, v)
			}
		}
		return SpreadOf(vals)
	}
	always := func(f func(PointSummary) float64) Spread {
		return collect(func(p PointSummary) (float64, bool) { return f(p), true })
	}
	g.GoodputGbps = always(func(p PointSummary) float64 { return p.GoodputGbps })
	g.AchievedLoad = collect(func(p PointSummary) (float64, bool) { return p.AchievedLoad, p.AchievedLoad > 0 })
	g.PFCPausePerS = collect(func(p PointSummary) (float64, bool) { return p.PFCPauseTxPerS, p.RateSpanNs > 0 })
	g.ECNMarksPerS = always(func(p PointSummary) float64 { return p.ECNMarksPerSec })
	g.PeakQueueBytes = always(func(p PointSummary) float64 { return float64(p.PeakQueueBytes) })
	g.MeanQueueBytes = always(func(p PointSummary) float64 { return p.MeanQueueBytes })
	g.OutOfOrder = collect(func(p PointSummary) (float64, bool) { return float64(deref(p.OutOfOrder)), p.OutOfOrder != nil })
	tiers := map[string]bool{}
	for _, p := range ps {
		for _, t := range p.PFCByTier {
			tiers[t.Tier] = true
		}
	}
	for t := range tiers {
		if g.PFCTierPerS == nil {
			g.PFCTierPerS = map[string]Spread{}
		}
		g.PFCTierPerS[t] = collect(func(p PointSummary) (float64, bool) {
			for _, x := range p.PFCByTier {
				if x.Tier == t {
					return x.TxPerS, p.RateSpanNs > 0
				}
			}
			return 0, p.RateSpanNs > 0 // the tier reported nothing: no pauses
		})
	}
	// Buckets in the order the points list them ("all" first).
	var names []string
	seen := map[string]bool{}
	for _, p := range ps {
		for _, b := range p.BySize {
			if !seen[b.Bucket] {
				seen[b.Bucket] = true
				names = append(names, b.Bucket)
			}
		}
	}
	pick := func(p PointSummary, bucket string) (BucketSummary, bool) {
		if bucket == "all" {
			return BucketSummary{Bucket: "all", Flows: p.FCT.Count, FCT: p.FCT, Slowdown: p.Slowdown}, p.FCT.Count > 0
		}
		for _, b := range p.BySize {
			if b.Bucket == bucket {
				return b, true
			}
		}
		return BucketSummary{}, false
	}
	for _, name := range append([]string{"all"}, names...) {
		gb := GroupBucket{Bucket: name}
		stat := func(f func(BucketSummary) (float64, bool)) Spread {
			return collect(func(p PointSummary) (float64, bool) {
				b, ok := pick(p, name)
				if !ok {
					return 0, false
				}
				return f(b)
			})
		}
		for _, p := range ps {
			b, _ := pick(p, name)
			gb.Flows += b.Flows
		}
		gb.FCTMean = stat(func(b BucketSummary) (float64, bool) { return b.FCT.Mean, true })
		gb.FCTP99 = stat(func(b BucketSummary) (float64, bool) { return float64(b.FCT.P99), true })
		gb.FCTP999 = stat(func(b BucketSummary) (float64, bool) { return float64(b.FCT.P999), true })
		gb.FCTMax = stat(func(b BucketSummary) (float64, bool) { return float64(b.FCT.Max), true })
		gb.SlowdownMean = stat(func(b BucketSummary) (float64, bool) { return b.Slowdown.Mean, b.Slowdown.Count > 0 })
		gb.SlowdownP99 = stat(func(b BucketSummary) (float64, bool) { return b.Slowdown.P99, b.Slowdown.Count > 0 })
		if gb.Flows > 0 {
			g.BySize = append(g.BySize, gb)
		}
	}
}

// ErrNoSuchScheme: the baseline scheme asked for is none of the run's.
var ErrNoSuchScheme = errors.New("no such scheme")

// baseline is the requested scheme (an error listing the run's schemes
// when no group has it), else ecmp if present, else the first scheme by
// name.
func baseline(gs []Group, want string) (string, error) {
	var schemes []string
	for _, g := range gs {
		if g.Scheme != "" && !slices.Contains(schemes, g.Scheme) {
			schemes = append(schemes, g.Scheme)
		}
	}
	sort.Strings(schemes)
	switch {
	case want != "" && !slices.Contains(schemes, want):
		have := "none (no point has a scheme)"
		if len(schemes) > 0 {
			have = strings.Join(schemes, ", ")
		}
		return "", fmt.Errorf("baseline scheme %q: %w; the schemes are %s", want, ErrNoSuchScheme, have)
	case want != "":
		return want, nil
	case slices.Contains(schemes, "ecmp"):
		return "ecmp", nil
	case len(schemes) > 0:
		return schemes[0], nil
	}
	return "", nil
}

// compareGroups compares, within each condition, every pair of schemes
// that have a successful group: the baseline against every other scheme
// first, then the other pairs, each scheme against one before it in the
// order baseline, then by name.
func compareGroups(gs []Group, base string) []Comparison {
	var conds []string
	byCond := map[string][]*Group{}
	for i := range gs {
		g := &gs[i]
		if g.OK == 0 || g.Scheme == "" {
			continue
		}
		if _, ok := byCond[g.Condition]; !ok {
			conds = append(conds, g.Condition)
		}
		byCond[g.Condition] = append(byCond[g.Condition], g)
	}
	var out []Comparison
	for _, c := range conds {
		s := byCond[c]
		sort.SliceStable(s, func(i, j int) bool {
			if (s[i].Scheme == base) != (s[j].Scheme == base) {
				return s[i].Scheme == base
			}
			return s[i].Scheme < s[j].Scheme
		})
		for i := range s {
			for j := i + 1; j < len(s); j++ {
				out = append(out, compareTwo(s[j], s[i])...)
			}
		}
	}
	return out
}

// compareTwo compares group x against group y on every metric and bucket
// both have.
func compareTwo(x, y *Group) []Comparison {
	var out []Comparison
	for _, bx := range x.BySize {
		var by *GroupBucket
		for i := range y.BySize {
			if y.BySize[i].Bucket == bx.Bucket {
				by = &y.BySize[i]
			}
		}
		if by == nil {
			continue
		}
		for _, m := range []struct {
			name   string
			vx, vy Spread
		}{{"avg FCT", bx.FCTMean, by.FCTMean}, {"p99 FCT", bx.FCTP99, by.FCTP99},
			{"avg slowdown", bx.SlowdownMean, by.SlowdownMean}, {"p99 slowdown", bx.SlowdownP99, by.SlowdownP99}} {
			if m.vx.N == 0 || m.vy.N == 0 || m.vy.Mean <= 0 || m.vx.Mean <= 0 {
				continue
			}
			c := Comparison{Condition: x.Condition, Workload: x.Workload, Load: x.Load, Scheme: x.Scheme, Baseline: y.Scheme,
				Metric: m.name, Bucket: bx.Bucket, Value: m.vx.Mean, BaselineValue: m.vy.Mean,
				ReductionPct: (m.vy.Mean - m.vx.Mean) / m.vy.Mean * 100, Ratio: m.vy.Mean / m.vx.Mean,
				N: m.vx.N, BaselineN: m.vy.N, Noise: Noise(DefaultNoiseSigma, m.vx, m.vy)}
			c.WithinNoise = math.Abs(m.vx.Mean-m.vy.Mean) <= c.Noise
			c.Sentence = sentence(c, x.Params)
			out = append(out, c)
		}
	}
	return out
}

// sentence says a comparison as the papers do: "drill reduces avg FCT of
// <100KB flows by 20.0% vs ecmp at load 0.8 (websearch) [n=3 vs 3]"; the
// parameters other than scheme, load and workload follow the workload,
// the repetitions behind each mean come last, with "within noise" when
// the difference is no larger than the noise allowance.
func sentence(c Comparison, params map[string]any) string {
	verb, pct := "reduces", c.ReductionPct
	if pct < 0 {
		verb, pct = "increases", -pct
	}
	metric := c.Metric
	if c.Bucket != "all" {
		metric += " of " + c.Bucket + " flows"
	}
	s := fmt.Sprintf("%s %s %s by %.1f%% vs %s", c.Scheme, verb, metric, pct, c.Baseline)
	if c.Load != 0 {
		s += " at load " + strconv.FormatFloat(c.Load, 'g', -1, 64)
	}
	var rest []string
	for k, v := range params {
		if k != ParamScheme && k != ParamLoad && k != ParamWorkload && !repetitionParam(k) {
			rest = append(rest, fmt.Sprintf("%s=%v", k, v))
		}
	}
	sort.Strings(rest)
	if c.Workload != "" {
		rest = append([]string{c.Workload}, rest...)
	}
	if params == nil {
		rest = []string{strings.TrimPrefix(c.Condition, "point=")}
	}
	if len(rest) > 0 {
		s += " (" + strings.Join(rest, ", ") + ")"
	}
	s += fmt.Sprintf(" [n=%d vs %d", c.N, c.BaselineN)
	if c.WithinNoise {
		s += ", within noise"
	}
	return s + "]"
}
