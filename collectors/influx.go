package collectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	ihttp "github.com/influxdata/influxdb-client-go/v2/api/http"
	"github.com/influxdata/influxdb-client-go/v2/api/write"
)

// InfluxConfig says where telemetry goes. InfluxDB 1.8 serves the v2 write
// API: Bucket is "database" or "database/retention", Token "user:password"
// or empty without auth, Org is ignored.
type InfluxConfig struct {
	URL, Org, Bucket, Token string
	BatchSize               int           // points per write request (default 5000)
	FlushInterval           time.Duration // a partial batch waits at most this long (default 1s)
	// QueueSize bounds the points held in memory for the writer (default
	// 100000); beyond it points go to the spool at once. While InfluxDB
	// is down the writer moves what is queued to the spool.
	QueueSize int
	// Timeout bounds one write request (default 5s): a hung InfluxDB (a
	// stopped process still holds its socket) costs at most this long
	// before its points are spooled.
	Timeout time.Duration
	// Slow: a write that took longer than this (but answered) is counted
	// as slow and reported (default 1s).
	Slow time.Duration
	// RetryInterval is how often a replay of the spool is tried while
	// InfluxDB is down (default 1s).
	RetryInterval time.Duration
	// CloseTimeout bounds the last replay when the sink closes (default
	// 30s); what is left stays in the spool for `labctl telemetry replay`.
	CloseTimeout time.Duration
	// SpoolDir holds the points InfluxDB has not acknowledged (Spool).
	// Required: nothing is ever dropped for want of it. It must not be a
	// directory the report reads telemetry from.
	SpoolDir string
	Logger   *slog.Logger
}

func (c *InfluxConfig) defaults() {
	c.BatchSize = cmpOr(c.BatchSize, 5000)
	c.FlushInterval = cmpOr(c.FlushInterval, time.Second)
	c.QueueSize = cmpOr(c.QueueSize, 100000)
	c.Timeout = cmpOr(c.Timeout, 5*time.Second)
	c.Slow = cmpOr(c.Slow, time.Second)
	c.RetryInterval = cmpOr(c.RetryInterval, time.Second)
	c.CloseTimeout = cmpOr(c.CloseTimeout, 30*time.Second)
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// InfluxStats counts what happened to points. Every point given to Write
// is, at any time, queued, in flight, Written, Pending in the spool, or
// Lost (the spool could not take it: only then is a point missing from
// InfluxDB for good; the archive still has it).
type InfluxStats struct {
	Written  int `json:"written"`  // acknowledged by InfluxDB, replays included
	Spooled  int `json:"spooled"`  // ever put in the spool
	Replayed int `json:"replayed"` // acknowledged from the spool
	Pending  int `json:"pending"`  // in the spool, not yet acknowledged
	Lost     int `json:"lost"`     // neither written nor spooled
	// Rejected counts points of batches InfluxDB refused (HTTP 400/422):
	// not retried, as they would be refused again.
	Rejected int `json:"rejected,omitempty"`
	// TimedOut counts write requests InfluxDB did not answer within
	// Timeout; Slow those that answered after Slow; MaxWrite is the
	// longest answered write.
	TimedOut int           `json:"timed_out"`
	Slow     int           `json:"slow_writes"`
	MaxWrite time.Duration `json:"max_write_ns"`
	// Outages are the spans InfluxDB was not taking writes.
	Outages []Outage `json:"outages,omitempty"`
}

// Outage is a span during which InfluxDB failed every write; To is zero
// while it lasts.
type Outage struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to,omitempty"`
	Err  string    `json:"error"`
}

// InfluxSink writes points to InfluxDB from a goroutine of its own:
// Write only queues them (or, when the queue is full or InfluxDB is down,
// appends them to the spool), so a slow or dead InfluxDB never holds up
// the gNMI receive loops. The writer replays the spool as soon as a write
// succeeds again, and once more on Close.
type InfluxSink struct {
	cfg    InfluxConfig
	client influxdb2.Client
	api    api.WriteAPIBlocking
	spool  *Spool

	mu        sync.Mutex
	queue     []Point
	down      bool // the last write failed: new points go to the spool
	lastTry   time.Time
	stats     InfluxStats
	lastErr   error
	closed    bool
	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// NewInfluxSink opens the spool (what a previous process left in it is
// replayed too) and starts the writer; it connects lazily.
func NewInfluxSink(cfg InfluxConfig) (*InfluxSink, error) {
	if cfg.URL == "" || cfg.Bucket == "" {
		return nil, fmt.Errorf("influxdb: url and bucket are required")
	}
	if cfg.SpoolDir == "" {
		return nil, fmt.Errorf("influxdb %s: a spool directory is required", cfg.URL)
	}
	cfg.defaults()
	sp, err := OpenSpool(cfg.SpoolDir)
	if err != nil {
		return nil, fmt.Errorf("influxdb %s: %w", cfg.URL, err)
	}
	s := newInfluxWriter(cfg, sp)
	go s.writer()
	return s, nil
}

// newInfluxWriter is the sink without its goroutine (replay uses it so).
func newInfluxWriter(cfg InfluxConfig, sp *Spool) *InfluxSink {
	// The client's own timeout is a backstop; each request has cfg.Timeout.
	opts := influxdb2.DefaultOptions().SetHTTPRequestTimeout(uint(cfg.Timeout/time.Second) + 5)
	c := influxdb2.NewClientWithOptions(cfg.URL, cfg.Token, opts)
	s := &InfluxSink{cfg: cfg, client: c, api: c.WriteAPIBlocking(cfg.Org, cfg.Bucket), spool: sp,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.stats.Pending = sp.Pending()
	return s
}

// Write queues pts for the writer; when the queue is full it appends them
// to the spool instead. It never waits for InfluxDB.
func (s *InfluxSink) Write(_ context.Context, pts []Point) error {
	if len(pts) == 0 {
		return nil
	}
	s.mu.Lock()
	// While InfluxDB is down the writer spools what is queued, a batch per
	// append; only what overflows the queue is spooled here, point by
	// notification.
	if !s.closed && len(s.queue)+len(pts) <= s.cfg.QueueSize {
		s.queue = append(s.queue, pts...)
		full := len(s.queue) >= s.cfg.BatchSize
		s.mu.Unlock()
		if full {
			s.signal()
		}
		return nil
	}
	s.mu.Unlock()
	return s.toSpool(pts)
}

func (s *InfluxSink) signal() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// toSpool keeps pts for a replay; a point the spool cannot take is lost
// (to InfluxDB only) and counted.
func (s *InfluxSink) toSpool(pts []Point) error {
	err := s.spool.Append(pts)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.stats.Lost += len(pts)
		s.lastErr = err
		return fmt.Errorf("influxdb %s: %d points lost: %w", s.cfg.URL, len(pts), err)
	}
	s.stats.Spooled += len(pts)
	s.stats.Pending = s.spool.Pending()
	return nil
}

func (s *InfluxSink) writer() {
	defer close(s.done)
	t := time.NewTicker(min(s.cfg.FlushInterval, s.cfg.RetryInterval))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		case <-t.C:
		}
		s.drain(context.Background(), false)
	}
}

// drain writes what is queued, batch by batch, and replays the spool when
// InfluxDB takes writes. final: the sink is closing: write all, now.
func (s *InfluxSink) drain(ctx context.Context, final bool) {
	for {
		s.mu.Lock()
		n := min(len(s.queue), s.cfg.BatchSize)
		if n == 0 || (!final && n < s.cfg.BatchSize && time.Since(s.lastTry) < s.cfg.FlushInterval && !s.down) {
			s.mu.Unlock()
			break
		}
		batch := append([]Point(nil), s.queue[:n]...)
		s.queue = append(s.queue[:0], s.queue[n:]...)
		down := s.down
		s.mu.Unlock()
		if down {
			_ = s.toSpool(batch)
			continue
		}
		if err := s.send(ctx, batch); err != nil {
			_ = s.toSpool(batch)
		}
	}
	s.mu.Lock()
	retry := s.spool.Pending() > 0 && (!s.down || time.Since(s.lastTry) >= s.cfg.RetryInterval)
	s.mu.Unlock()
	if retry {
		s.replay(ctx)
	}
}

// replay writes the spool back; it also probes a down InfluxDB.
func (s *InfluxSink) replay(ctx context.Context) {
	n, err := s.spool.Replay(ctx, s.cfg.BatchSize, s.send)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Replayed += n
	s.stats.Pending = s.spool.Pending()
	if err != nil && n > 0 {
		s.cfg.Logger.Warn("influxdb replay stopped", "url", s.cfg.URL, "replayed", n, "pending", s.stats.Pending, "err", err)
	} else if n > 0 {
		s.cfg.Logger.Info("influxdb spool replayed", "url", s.cfg.URL, "points", n)
	}
}

// send makes one write request, bounded by Timeout, and keeps the books:
// a failure opens an outage (later points go to the spool), a success
// closes it.
func (s *InfluxSink) send(ctx context.Context, batch []Point) error {
	wps := make([]*write.Point, len(batch))
	for i, p := range batch {
		fields := make(map[string]any, len(p.Fields))
		for k, v := range p.Fields {
			if u, ok := v.(uint64); ok { // 1.x has no unsigned type
				v = int64(min(u, math.MaxInt64))
			}
			fields[k] = v
		}
		wps[i] = influxdb2.NewPoint(p.Measurement, p.Tags, fields, p.Time)
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	began := time.Now()
	err := s.api.WritePoint(rctx, wps...)
	took := time.Since(began)
	timedOut := rctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastTry = time.Now()
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("influxdb %s: %w", s.cfg.URL, err) // the caller gave up, not InfluxDB
	}
	var herr *ihttp.Error
	if errors.As(err, &herr) && (herr.StatusCode == 400 || herr.StatusCode == 422) {
		// InfluxDB answered and refused the points (a field's type
		// conflicts with what it stored before): sending them again would
		// fail again and hold up the spool behind them. InfluxDB 1.x
		// keeps the valid points of such a batch; all are counted.
		s.stats.Rejected += len(batch)
		s.lastErr = err
		s.cfg.Logger.Error("influxdb rejected points", "url", s.cfg.URL, "points", len(batch), "err", err)
		return nil
	}
	if err != nil {
		if timedOut {
			s.stats.TimedOut++
			err = fmt.Errorf("no answer within %v (hung or overloaded): %w", s.cfg.Timeout, err)
		}
		if !s.down {
			s.stats.Outages = append(s.stats.Outages, Outage{From: began, Err: err.Error()})
			s.cfg.Logger.Warn("influxdb write failed; spooling until it is back", "url", s.cfg.URL, "points", len(batch), "err", err)
		}
		s.down, s.lastErr = true, err
		return fmt.Errorf("influxdb %s: %w", s.cfg.URL, err)
	}
	s.stats.Written += len(batch)
	s.stats.MaxWrite = max(s.stats.MaxWrite, took)
	if took > s.cfg.Slow {
		s.stats.Slow++
	}
	if s.down {
		s.stats.Outages[len(s.stats.Outages)-1].To = time.Now()
		s.cfg.Logger.Warn("influxdb is back", "url", s.cfg.URL)
	}
	s.down = false
	return nil
}

// Stats reports what happened to the points so far.
func (s *InfluxSink) Stats() InfluxStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Outages = append([]Outage(nil), s.stats.Outages...)
	st.Pending = s.spool.Pending()
	return st
}

// SpoolDir is where unacknowledged points wait.
func (s *InfluxSink) SpoolDir() string { return s.cfg.SpoolDir }

// Close writes what is queued and replays the spool, for at most
// CloseTimeout (and ctx); it reports points left in the spool or lost.
func (s *InfluxSink) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.stop)
		<-s.done
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CloseTimeout)
		defer cancel()
		s.mu.Lock()
		s.lastTry = time.Time{} // try now, down or not
		s.mu.Unlock()
		s.drain(cctx, true)
		s.client.Close()
		st := s.Stats()
		var errs []error
		if st.Pending > 0 {
			errs = append(errs, fmt.Errorf("influxdb %s: %d points not written (%v); they are in the spool %s: replay them with `labctl telemetry replay`",
				s.cfg.URL, st.Pending, s.lastErr, s.cfg.SpoolDir))
		}
		if st.Rejected > 0 {
			errs = append(errs, fmt.Errorf("influxdb %s: rejected %d points (%v); the run archive has them", s.cfg.URL, st.Rejected, s.lastErr))
		}
		if st.Lost > 0 {
			errs = append(errs, fmt.Errorf("influxdb %s: %d points lost: the spool %s could not take them (%v); the run archive has them",
				s.cfg.URL, st.Lost, s.cfg.SpoolDir, s.lastErr))
		}
		s.closeErr = errors.Join(errs...)
		if err := s.spool.Close(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

// Replay writes what the spool in cfg.SpoolDir holds to InfluxDB (for
// `labctl telemetry replay`, after the run): it stops at the first failed
// write and returns the stats (Replayed, Pending left).
func Replay(ctx context.Context, cfg InfluxConfig) (InfluxStats, error) {
	cfg.defaults()
	sp, err := OpenSpool(cfg.SpoolDir)
	if err != nil {
		return InfluxStats{}, err
	}
	defer sp.Close()
	s := newInfluxWriter(cfg, sp)
	defer s.client.Close()
	n, err := sp.Replay(ctx, cfg.BatchSize, s.send)
	st := s.Stats()
	st.Replayed = n
	if t := sp.Torn(); t > 0 {
		err = errors.Join(err, fmt.Errorf("spool %s: %d torn last lines skipped (a crash cut them; the archive has those points)", cfg.SpoolDir, t))
	}
	return st, err
}
