package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

// Analyser holds the analysis settings; the zero value uses the defaults.
type Analyser struct {
	// Warn, when set, hears each thing reading the archives tolerated (a
	// torn last line): formats such as CSV have no place to print it.
	Warn func(string)
	// Buckets are ascending upper edges in bytes; n edges make n+1
	// buckets. Nil: DefaultBuckets.
	Buckets []int64
	// MarginNs extends each point's telemetry window past its end, so the
	// first sample after the traffic (which holds its last counts) is
	// included. 0: two sampling intervals, or 1 ms when the interval is
	// unknown; never into the next point.
	MarginNs int64
	// CDFPoints bounds the points per CDF line (0: 400), keeping the HTML
	// small for runs of many flows.
	CDFPoints int
	// SeriesPoints bounds the samples per time-series line (0: 300).
	SeriesPoints int
	// MTU and HeaderBytes give the packet geometry of the ideal FCT (0:
	// inventory.DefaultMTU and DefaultHeaderBytes, what the twin uses).
	MTU, HeaderBytes int
	// BaselineScheme is the scheme comparisons measure against ("": ecmp
	// if present, else the first scheme in name order).
	BaselineScheme string
	// Crashed, when set, says why a run whose manifest still says
	// "running" no longer runs ("" if it does): its summary's outcome is
	// then OutcomeCrashed, with a warning naming the stage it reached.
	Crashed func(m *Manifest) string
}

// OutcomeCrashed is the outcome of a run whose controller died before it
// could record one (its manifest still says "running").
const OutcomeCrashed = "crashed"

// Analyse computes a run's summary with the default settings.
func Analyse(run *Run) (*Summary, error) { return Analyser{}.Analyse(run) }

// Analyse computes a run's summary: every point, its groups of
// repetitions and the comparisons of schemes. It reads the flows and the
// telemetry once each, as streams: memory grows with points and buckets,
// not with flows.
func (a Analyser) Analyse(run *Run) (*Summary, error) {
	sum, err := a.points(run)
	if err != nil {
		return nil, err
	}
	if err := a.across(sum); err != nil {
		return nil, fmt.Errorf("run %s: %w", cmp.Or(run.Dir, run.Manifest.RunID), err)
	}
	return sum, nil
}

func (a Analyser) buckets() ([]int64, error) {
	b := a.Buckets
	if b == nil {
		b = DefaultBuckets()
	}
	if err := checkBuckets(b); err != nil {
		return nil, fmt.Errorf("size buckets: %w", err)
	}
	return b, nil
}

// points fills the per-point part of a run's summary.
func (a Analyser) points(run *Run) (*Summary, error) {
	edges, err := a.buckets()
	if err != nil {
		return nil, err
	}
	m := run.Manifest
	sum := &Summary{RunID: m.RunID, Scenario: m.Scenario, Outcome: m.Outcome, Buckets: edges}
	if m.Lab != nil {
		sum.Lab = m.Lab.Name
	}
	// Each point's ideal FCTs and switch tiers come from the lab it ran
	// on: a matrix may sweep topologies.
	ideals := map[*inventory.Lab]*idealer{}
	idealFor := func(lab *inventory.Lab) *idealer {
		d, ok := ideals[lab]
		if !ok {
			d = newIdealer(lab, cmp.Or(a.MTU, inventory.DefaultMTU), cmp.Or(a.HeaderBytes, inventory.DefaultHeaderBytes))
			ideals[lab] = d
		}
		return d
	}
	accs := map[string]*pointAcc{}
	var order []*pointAcc
	add := func(pm PointMeta, known bool) *pointAcc {
		lab := m.labOf(pm)
		pa := &pointAcc{meta: pm, known: known, edges: edges, lab: lab, ideal: idealFor(lab).forPoint()}
		accs[pm.Name] = pa
		order = append(order, pa)
		return pa
	}
	for _, pm := range m.Points {
		add(pm, true)
	}
	if run.Flows != nil {
		var last *pointAcc
		err := run.Flows(func(r FlowRow) error {
			if last == nil || last.meta.Name != r.Point {
				last = accs[r.Point]
				if last == nil { // a point the manifest does not list (an interrupted run)
					last = add(PointMeta{Name: r.Point}, false)
				}
			}
			last.add(r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", cmp.Or(run.Dir, m.RunID), err)
		}
	}
	metas := make([]PointMeta, len(order))
	labs := make([]*inventory.Lab, len(order))
	for i, pa := range order {
		metas[i], labs[i] = pa.windowed(), pa.lab
		sum.Points = append(sum.Points, pa.summary(cmp.Or(a.CDFPoints, 400)))
	}
	wins := windows(metas, a.MarginNs)
	for i, w := range wins {
		sum.Points[i].WindowStartNs, sum.Points[i].WindowEndNs = w.start, w.end
		sum.Points[i].NoTraffic = w.none
	}
	if run.Telemetry != nil {
		watch := make([]*seriesWatch, len(order))
		for i, pa := range order {
			watch[i] = newSeriesWatch(pa.lab, &pa.pick, metas[i].TelemetryIntervalNs)
			watch[i].setWindow(wins[i])
		}
		err := telemetryStats(run.Telemetry, wins, sum.Points, labs, watch, cmp.Or(a.SeriesPoints, 300))
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", cmp.Or(run.Dir, m.RunID), err)
		}
	}
	sum.Warnings = append(slices.Clip(m.Warnings), run.Warnings...)
	if m.Outcome == "running" && a.Crashed != nil {
		if why := a.Crashed(&m); why != "" {
			sum.Outcome = OutcomeCrashed
			sum.Warnings = append(slices.Clip(sum.Warnings), fmt.Sprintf("run %s crashed at stage %s (%s): this report covers the whole records it holds", m.RunID, m.Stage, why))
		}
	}
	return sum, nil
}

// pointAcc accumulates one point's flows.
type pointAcc struct {
	meta   PointMeta
	known  bool           // listed in the manifest
	lab    *inventory.Lab // the lab it ran on (nil: unknown)
	edges  []int64
	ideal  func(src, dst string, bytes int64) (int64, bool)
	flows  int
	failed int
	done   int
	// Histograms, made at the first completed flow (a failed point may
	// have none): index 0 is all flows, 1+i size bucket i.
	fct      []*FCTStats
	slow     []*SlowdownStats
	bins     sizeBins // slowdowns by log-spaced size bin, for the plot
	noIdeal  int
	idealSum float64 // ideal FCTs of the completed flows that have one
	bytes    int64
	start    int64
	end      int64
	steps    map[int]*StepTime // all-reduce only
	hosts    map[string]bool   // all-reduce only
	minRow   int64             // first start of any flow, for points without a window
	maxRow   int64
	maxStart int64 // last start of any flow: the arrival window when the manifest lacks it
	pick     flowPick
}

func (pa *pointAcc) add(r FlowRow) {
	if pa.flows == 0 || r.StartNs < pa.minRow {
		pa.minRow = r.StartNs
	}
	pa.maxRow = max(pa.maxRow, r.EndNs)
	pa.maxStart = max(pa.maxStart, r.StartNs)
	pa.flows++
	pa.pick.add(pa.meta.Pattern, r)
	if r.Status != perftest.StatusOK {
		pa.failed++
		return
	}
	fct := r.FCTNs
	if fct == 0 && r.EndNs > r.StartNs {
		fct = r.EndNs - r.StartNs
	}
	if pa.fct == nil {
		for range len(pa.edges) + 2 {
			pa.fct = append(pa.fct, NewFCTStats())
			pa.slow = append(pa.slow, NewSlowdownStats())
		}
	}
	b := 1 + bucketOf(r.Size, pa.edges)
	pa.fct[0].Add(fct)
	pa.fct[b].Add(fct)
	if id, ok := pa.ideal(r.Src, r.Dst, r.Size); ok {
		pa.slow[0].Add(fct, id)
		pa.slow[b].Add(fct, id)
		if pa.bins == nil {
			pa.bins = sizeBins{}
		}
		pa.bins.add(r.Size, fct, id)
		pa.idealSum += float64(id)
	} else {
		pa.noIdeal++
	}
	pa.bytes += r.Size
	if pa.done == 0 || r.StartNs < pa.start {
		pa.start = r.StartNs
	}
	pa.end = max(pa.end, r.EndNs)
	pa.done++
	if pa.meta.Pattern != "allreduce" {
		return
	}
	if pa.steps == nil {
		pa.steps, pa.hosts = map[int]*StepTime{}, map[string]bool{}
	}
	st, ok := pa.steps[r.Step]
	if !ok {
		st = &StepTime{Step: r.Step, StartNs: r.StartNs, EndNs: r.EndNs}
		pa.steps[r.Step] = st
	}
	st.StartNs, st.EndNs = min(st.StartNs, r.StartNs), max(st.EndNs, r.EndNs)
	pa.hosts[r.Src], pa.hosts[r.Dst] = true, true
}

// windowed is the point's metadata with a window: the manifest's, or for
// a point without one, the span of its flows.
func (pa *pointAcc) windowed() PointMeta {
	pm := pa.meta
	if pm.EndNs == 0 {
		pm.StartNs, pm.EndNs = pa.minRow, pa.maxRow
	}
	if !pa.known {
		pm.Flows = pa.flows
	}
	return pm
}

func (pa *pointAcc) summary(cdfPoints int) PointSummary {
	pm := pa.windowed()
	ps := PointSummary{Name: pm.Name, Pattern: pm.Pattern, Params: pm.Params, Status: cmp.Or(pm.Status, StatusOK), Error: pm.Error,
		RequestedLoad: pm.RequestedLoad, AchievedLoad: pm.AchievedLoad, Flows: pa.flows, Failed: pa.failed, NoIdeal: pa.noIdeal,
		StartNs: pa.start, EndNs: pa.end, DurationNs: pm.EndNs - pm.StartNs}
	ps.Scheme, _ = pm.Params[ParamScheme].(string)
	ps.Workload, _ = pm.Params[ParamWorkload].(string)
	if pm.Pattern == "incast" && pm.Hosts > 1 {
		ps.Senders, ps.LinkGbps = pm.Hosts-1, pm.LinkGbps
	}
	ps.Load = cmp.Or(number(pm.Params[ParamLoad]), pm.RequestedLoad)
	if pa.fct != nil {
		ps.FCT, ps.Slowdown, ps.CDF = pa.fct[0].Summary(), pa.slow[0].Summary(), pa.fct[0].CDF(cdfPoints)
		ps.SizeBins = pa.bins.list()
		for i := range len(pa.edges) + 1 {
			if f := pa.fct[i+1]; f.Count() > 0 {
				ps.BySize = append(ps.BySize, BucketSummary{Bucket: bucketName(i, pa.edges), Flows: f.Count(), FCT: f.Summary(), Slowdown: pa.slow[i+1].Summary()})
			}
		}
	}
	// Rates divide by the point's traffic span; for a workload, by its
	// arrival window plus the mean ideal FCT of its flows, so one
	// straggler does not decide them (docs/reports.md, "Rates").
	ps.RateSpanNs = ps.DurationNs
	span := ps.EndNs - ps.StartNs // first start to last end of the completed flows
	if w := pa.arrivalWindow(); w > 0 {
		ps.ArrivalWindowNs = w
		ps.RateSpanNs = w
		if n := ps.Slowdown.Count; n > 0 {
			ps.RateSpanNs += int64(math.Round(pa.idealSum / float64(n)))
		}
		span = ps.RateSpanNs
	}
	// Goodput: completed bytes over the span (bits per ns = Gb/s).
	if span > 0 {
		ps.GoodputGbps = float64(pa.bytes) * 8 / float64(span)
	}
	if pm.Pattern == "allreduce" {
		ps.AllReduce = allReduce(pm, pa.hosts, pa.steps, span, pa.failed == 0 && pa.done > 0)
	}
	return ps
}

// arrivalWindow is a workload point's arrival window: the manifest's, or
// for an archive without it the span of its flows' starts (Poisson
// arrivals fill the window to within one inter-arrival time); 0 for other
// patterns.
func (pa *pointAcc) arrivalWindow() int64 {
	if w := pa.meta.WindowNs; w > 0 {
		return w
	}
	if pa.meta.Pattern != "workload" || pa.flows < 2 {
		return 0
	}
	return pa.maxStart - pa.minRow
}

// number reads a Params value that JSON decoded as float64 (or a test
// built as int).
func number(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return 0
}

func allReduce(pm PointMeta, hosts map[string]bool, steps map[int]*StepTime, total int64, complete bool) *AllReduceSummary {
	ar := &AllReduceSummary{Hosts: pm.Hosts, BufferBytes: pm.BufferBytes, TotalNs: total, Complete: complete}
	if ar.Hosts == 0 { // derive from the ring when the runner did not say
		ar.Hosts = len(hosts)
	}
	for _, st := range steps {
		st.DurationNs = st.EndNs - st.StartNs
		ar.Steps = append(ar.Steps, *st)
	}
	sort.Slice(ar.Steps, func(i, j int) bool { return ar.Steps[i].Step < ar.Steps[j].Step })
	if !complete || total <= 0 {
		return ar
	}
	// nccl-tests, doc/PERFORMANCE.md: algbw = S / t (S the buffer size, t
	// the operation's time); for all-reduce busbw = algbw * 2(n-1)/n, the
	// per-rank link traffic of an optimal ring, comparable to link speed.
	ar.AlgBWGbps = float64(pm.BufferBytes) * 8 / float64(total)
	if n := float64(ar.Hosts); n > 0 {
		ar.BusBWGbps = ar.AlgBWGbps * 2 * (n - 1) / n
	}
	return ar
}
