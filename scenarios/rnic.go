package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/reports"
)

// rnicSample is one read of an RNIC's counters: its RDMA hw_counters and
// the pause and ECN counters of `ethtool -S` on its netdev.
type rnicSample struct {
	host, dev, netdev string
	at                time.Time // when it was read
	hw, eth           map[string]uint64
	err               error
}

// readRNICs reads the counters of every RNIC of hosts (hosts in parallel,
// samples in host order). A host that cannot be reached gives a failed
// sample, which becomes a recorded gap.
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
			smps = append(smps, sess.readRNIC(ctx, t, r))
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

// readRNIC reads one RNIC: `cat` of its hw_counters, then `ethtool -S` of
// its netdev, keeping the counters the schema names
// (collectors.EthtoolCounters).
func (sess *session) readRNIC(ctx context.Context, t sshdrv.Target, r inventory.RNIC) rnicSample {
	smp := rnicSample{host: t.Name, dev: r.Device, netdev: r.Netdev}
	res, err := sess.ssh.Exec(ctx, t, connectx.HWCountersCommand(r.Device))
	if err == nil {
		smp.hw, err = connectx.ParseHWCounters(r.Device, string(res.Stdout), string(res.Stderr))
	}
	if err == nil && len(smp.hw) == 0 {
		err = fmt.Errorf("no hw_counters under %s", connectx.HWCountersDir(r.Device))
	}
	if err == nil && r.Netdev != "" {
		smp.eth, err = sess.ethtoolStats(ctx, t, r.Netdev)
	}
	smp.at = time.Now()
	if err != nil {
		smp.err = fmt.Errorf("host %s: %w", t.Name, err)
	}
	return smp
}

// ethtoolStats runs `ethtool -S netdev` and keeps the schema's counters.
func (sess *session) ethtoolStats(ctx context.Context, t sshdrv.Target, netdev string) (map[string]uint64, error) {
	res, err := sess.ssh.Exec(ctx, t, connectx.EthtoolStatsCommand(netdev))
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("ethtool -S %s: %w", netdev, err)
	}
	all, order, err := connectx.ParseEthtoolStats(string(res.Stdout))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", netdev, err)
	}
	kept := map[string]uint64{}
	for _, k := range order {
		if collectors.KeepEthtool(k) {
			kept[k] = all[k]
		}
	}
	return kept, nil
}

// points are a sample's schema points stamped ts: rnic (hw_counters) and
// rnic_ethtool (pause and ECN counters).
func (smp rnicSample) points(lab, runID string, ts time.Time) []collectors.Point {
	tags := func(netdev bool) map[string]string {
		t := map[string]string{collectors.TagLab: lab, collectors.TagRun: runID, collectors.TagHost: smp.host, collectors.TagDevice: smp.dev}
		if netdev {
			t[collectors.TagNetdev] = smp.netdev
		}
		return t
	}
	fields := func(m map[string]uint64) map[string]any {
		f := make(map[string]any, len(m))
		for k, v := range m {
			f[k] = v
		}
		return f
	}
	pts := []collectors.Point{{Measurement: collectors.MeasRNIC, Time: ts, Tags: tags(false), Fields: fields(smp.hw)}}
	if len(smp.eth) > 0 {
		pts = append(pts, collectors.Point{Measurement: collectors.MeasEthtool, Time: ts, Tags: tags(true), Fields: fields(smp.eth)})
	}
	return pts
}

// writeRNICs writes a point's counter samples (rnic and rnic_ethtool,
// tags lab, run, host, device; netdev on rnic_ethtool) to the session's
// sinks. Samples are stamped on the schedule's timeline: the first read
// no later than the point's first flow start, those polled during the
// traffic after it and before its last flow end, the last read no earlier than its last flow end (an
// emulated lab's twin may run ahead of the wall clock), each after the
// session's previous rnic sample. A read that failed is recorded as a
// collector_gap over the point.
func (sess *session) writeRNICs(ctx context.Context, runID string, before, during, after []rnicSample, meta *reports.PointMeta) {
	var pts []collectors.Point
	// Each RNIC's samples are stamped apart (InfluxDB keeps one point per
	// series and time): polls clamped to the window's start would share it.
	last := map[[2]string]int64{}
	stamp := func(smp rnicSample, lo, hi int64) time.Time {
		ts := smp.at.UnixNano()
		if hi > 0 {
			ts = min(ts, hi)
		}
		k := [2]string{smp.host, smp.dev}
		ts = max(ts, lo, sess.lastRNIC.UnixNano()+1, last[k]+1)
		last[k] = ts
		return time.Unix(0, ts)
	}
	add := func(smps []rnicSample, lo, hi int64) {
		var newest time.Time
		for _, smp := range smps {
			if smp.err != nil {
				sess.col.addError(smp.err)
				gap := collectors.Gap{Host: smp.host, Device: smp.dev, Reason: smp.err.Error(), Since: time.Unix(0, meta.StartNs), Until: time.Unix(0, meta.EndNs)}
				pts = append(pts, gap.Point(sess.lab.Name, runID, smp.at))
				continue
			}
			ts := stamp(smp, lo, hi)
			pts = append(pts, smp.points(sess.lab.Name, runID, ts)...)
			if ts.After(newest) {
				newest = ts
			}
		}
		if newest.After(sess.lastRNIC) {
			sess.lastRNIC = newest
		}
	}
	add(before, 0, meta.StartNs-1)
	add(during, meta.StartNs+1, meta.EndNs-1) // an emulated host answers once its twin is past the end
	add(after, meta.EndNs+1, 0)
	if len(pts) == 0 {
		return
	}
	if err := sess.col.sink.Write(ctx, pts); err != nil {
		sess.col.addError(fmt.Errorf("rnic counters: %w", err))
	}
}
