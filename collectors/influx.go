package collectors

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	"github.com/influxdata/influxdb-client-go/v2/api/write"
)

// InfluxConfig says where telemetry goes. InfluxDB 1.8 serves the v2 write
// API: Bucket is "database" or "database/retention", Token "user:password"
// or empty without auth, Org is ignored.
type InfluxConfig struct {
	URL, Org, Bucket, Token string
	BatchSize               int           // default 5000
	FlushInterval           time.Duration // default 1s
	MaxRetries              int           // default 5
	// SpoolPath receives, as line protocol, every point that could not be
	// written after all retries.
	SpoolPath string
	Logger    *slog.Logger
}

// InfluxStats counts what happened to points.
type InfluxStats struct{ Written, Failed int }

// InfluxSink batches points to InfluxDB with retries; what finally fails
// is spooled and reported, never dropped silently.
type InfluxSink struct {
	cfg    InfluxConfig
	client influxdb2.Client
	api    api.WriteAPIBlocking

	mu      sync.Mutex
	pending []Point
	stats   InfluxStats
	lastErr error
	stop    chan struct{}
	done    chan struct{}
}

// NewInfluxSink connects lazily; it starts a background flusher.
func NewInfluxSink(cfg InfluxConfig) (*InfluxSink, error) {
	if cfg.URL == "" || cfg.Bucket == "" {
		return nil, fmt.Errorf("influxdb: url and bucket are required")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 5000
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := influxdb2.NewClientWithOptions(cfg.URL, cfg.Token, influxdb2.DefaultOptions().SetHTTPRequestTimeout(10))
	s := &InfluxSink{cfg: cfg, client: c, api: c.WriteAPIBlocking(cfg.Org, cfg.Bucket), stop: make(chan struct{}), done: make(chan struct{})}
	go s.flusher()
	return s, nil
}

func (s *InfluxSink) flusher() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.flush(context.Background())
		}
	}
}

// Write queues points; full batches are written at once.
func (s *InfluxSink) Write(ctx context.Context, pts []Point) error {
	s.mu.Lock()
	s.pending = append(s.pending, pts...)
	full := len(s.pending) >= s.cfg.BatchSize
	s.mu.Unlock()
	if full {
		s.flush(ctx)
	}
	return nil
}

func (s *InfluxSink) flush(ctx context.Context) {
	s.mu.Lock()
	batch := s.pending
	s.pending = nil
	s.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), s.cfg.BatchSize)
		s.writeBatch(ctx, batch[:n])
		batch = batch[n:]
	}
}

func (s *InfluxSink) writeBatch(ctx context.Context, batch []Point) {
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
	var err error
	backoff := 100 * time.Millisecond
	for attempt := 0; attempt <= s.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			time.Sleep(backoff)
			backoff *= 2
		}
		if err = s.api.WritePoint(ctx, wps...); err == nil {
			s.mu.Lock()
			s.stats.Written += len(batch)
			s.mu.Unlock()
			return
		}
		s.cfg.Logger.Warn("influxdb write failed", "url", s.cfg.URL, "attempt", attempt+1, "points", len(batch), "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Failed += len(batch)
	s.lastErr = err
	if s.cfg.SpoolPath == "" {
		return
	}
	f, ferr := os.OpenFile(s.cfg.SpoolPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if ferr != nil {
		s.lastErr = fmt.Errorf("%v; and the spool %s failed too: %w", err, s.cfg.SpoolPath, ferr)
		return
	}
	defer f.Close()
	for _, p := range batch {
		_ = EncodeLP(f, p)
	}
}

// Stats reports written and failed points.
func (s *InfluxSink) Stats() InfluxStats { s.mu.Lock(); defer s.mu.Unlock(); return s.stats }

// Close flushes what is pending and reports any points that were not written.
func (s *InfluxSink) Close(ctx context.Context) error {
	close(s.stop)
	<-s.done
	s.flush(ctx)
	s.client.Close()
	st := s.Stats()
	if st.Failed > 0 {
		where := "they are lost: no spool file was configured"
		if s.cfg.SpoolPath != "" {
			where = "they are in " + s.cfg.SpoolPath + " (line protocol, re-importable)"
		}
		return fmt.Errorf("influxdb %s: %d of %d points not written (%v); %s", s.cfg.URL, st.Failed, st.Failed+st.Written, s.lastErr, where)
	}
	return nil
}
