package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/reports"
)

// rnicSample is one read of an RNIC's hw_counters.
type rnicSample struct {
	host, dev string
	at        time.Time // when it was read
	values    map[string]uint64
	err       error
}

// readRNICs reads the RDMA hw_counters of every RNIC of hosts (one cat per
// RNIC, hosts in parallel, samples in host order). A host that cannot be
// reached gives a failed sample, which becomes a recorded gap.
func (sess *session) readRNICs(ctx context.Context, hosts []string) []rnicSample {
	var out []rnicSample
	var targets []sshdrv.Target
	for _, h := range hosts {
		t, err := sess.target(h)
		if err != nil {
			out = append(out, rnicSample{host: h, at: time.Now(), err: err})
			continue
		}
		targets = append(targets, t)
	}
	per, errs := sshdrv.Each(ctx, sess.ssh, targets, nil, func(ctx context.Context, t sshdrv.Target) ([]rnicSample, error) {
		h, _ := sess.lab.Host(t.Name)
		var smps []rnicSample
		for _, r := range h.RNICs {
			smp := rnicSample{host: t.Name, dev: r.Device}
			res, err := sess.ssh.Exec(ctx, t, connectx.HWCountersCommand(r.Device))
			smp.at = time.Now()
			if err == nil {
				smp.values, err = connectx.ParseHWCounters(r.Device, string(res.Stdout), string(res.Stderr))
			}
			if err == nil && len(smp.values) == 0 {
				err = fmt.Errorf("no hw_counters under %s", connectx.HWCountersDir(r.Device))
			}
			if err != nil {
				smp.err = fmt.Errorf("host %s: %w", t.Name, err)
			}
			smps = append(smps, smp)
		}
		return smps, nil
	})
	for i, smps := range per {
		if errs[i] != nil { // not started: ctx ended
			smps = []rnicSample{{host: targets[i].Name, at: time.Now(), err: errs[i]}}
		}
		out = append(out, smps...)
	}
	return out
}

// writeRNICs writes a point's counter samples as the measurement "rnic"
// (tags lab, run, host, device; one cumulative field per counter file) to
// the session's sinks. Samples are stamped on the schedule's timeline:
// the first read no later than the point's first flow start, the second
// no earlier than its last flow end (an emulated lab's twin may run ahead
// of the wall clock), each after the session's previous rnic sample. A
// read that failed is recorded as a collector_gap over the point.
func (sess *session) writeRNICs(ctx context.Context, runID string, before, after []rnicSample, meta *reports.PointMeta) {
	var pts []collectors.Point
	stamp := func(at time.Time, lo, hi int64) time.Time {
		ts := at.UnixNano()
		if hi > 0 {
			ts = min(ts, hi)
		}
		ts = max(ts, lo, sess.lastRNIC.UnixNano()+1)
		return time.Unix(0, ts)
	}
	add := func(smps []rnicSample, lo, hi int64) {
		var newest time.Time
		for _, smp := range smps {
			tags := map[string]string{collectors.TagLab: sess.lab.Name, collectors.TagRun: runID, collectors.TagHost: smp.host, collectors.TagDevice: smp.dev}
			if smp.err != nil {
				sess.col.addError(smp.err)
				gap := collectors.Gap{Host: smp.host, Device: smp.dev, Reason: smp.err.Error(), Since: time.Unix(0, meta.StartNs), Until: time.Unix(0, meta.EndNs)}
				pts = append(pts, gap.Point(sess.lab.Name, runID, smp.at))
				continue
			}
			fields := make(map[string]any, len(smp.values))
			for k, v := range smp.values {
				fields[k] = v
			}
			ts := stamp(smp.at, lo, hi)
			pts = append(pts, collectors.Point{Measurement: collectors.MeasRNIC, Time: ts, Tags: tags, Fields: fields})
			if ts.After(newest) {
				newest = ts
			}
		}
		if newest.After(sess.lastRNIC) {
			sess.lastRNIC = newest
		}
	}
	add(before, 0, meta.StartNs-1)
	add(after, meta.EndNs+1, 0)
	if len(pts) == 0 {
		return
	}
	if err := sess.col.sink.Write(ctx, pts); err != nil {
		sess.col.addError(fmt.Errorf("rnic counters: %w", err))
	}
}
