package collectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openconfig/gnmi/path"
	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// GNMITarget is a switch's gNMI endpoint.
type GNMITarget struct{ Device, Addr string }

// GNMIOptions tune a collector.
type GNMIOptions struct {
	Interval time.Duration // SAMPLE interval
	// Paths are subscription paths; a path may start with "COUNTERS_DB:"
	// to address the SONiC-style target. Default: DefaultPaths.
	Paths     []string
	Lab, Run  string // tags on every point
	Logger    *slog.Logger
	Reconnect time.Duration // first backoff after a broken stream (default 50ms; doubles up to ReconnectCap)
	Security  GNMISecurity  // TLS and credentials (gnmisec.go)
}

// DefaultPaths: OpenConfig interface and queue counters, and the
// COUNTERS_DB tables for PFC per priority and current queue occupancy,
// which OpenConfig does not model.
var DefaultPaths = []string{
	"/interfaces/interface[name=*]/state/counters",
	"/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state",
	"COUNTERS_DB:/COUNTERS/*",
}

// ReconnectCap is the longest wait between two resubscriptions after a
// broken stream: the sample interval, but at least 100ms and at most 1s,
// so a collector is back within about a second of its target.
func ReconnectCap(interval time.Duration) time.Duration {
	return min(max(interval, 100*time.Millisecond), time.Second)
}

// Collect streams a switch's counters into sink until ctx is done. A broken
// stream is resubscribed with backoff (ReconnectCap) and recorded as a
// collector_gap point once samples flow again.
func Collect(ctx context.Context, t GNMITarget, o GNMIOptions, sink Sink) error {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if len(o.Paths) == 0 {
		o.Paths = DefaultPaths
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Reconnect <= 0 {
		o.Reconnect = 50 * time.Millisecond
	}
	byTarget := map[string][]*pb.Path{}
	names := map[string][]string{}
	for _, p := range o.Paths {
		target, raw := t.Device, p
		if rest, ok := strings.CutPrefix(p, CountersDB+":"); ok {
			target, p = CountersDB, rest
		}
		gp, err := ParsePath(p)
		if err != nil {
			return fmt.Errorf("switch %s: path %q: %w", t.Device, p, err)
		}
		byTarget[target] = append(byTarget[target], gp)
		names[target] = append(names[target], raw)
	}
	// gRPC's own reconnect backoff (1s growing to 120s by default) would
	// keep the channel down long after the target is back.
	cp := grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: o.Reconnect, Multiplier: 1.6, Jitter: 0.2,
		MaxDelay: ReconnectCap(o.Interval)}, MinConnectTimeout: 5 * time.Second}
	dial, err := o.Security.DialOptions(t.Device, o.Logger)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(t.Addr, append(dial, grpc.WithConnectParams(cp))...)
	if err != nil {
		return fmt.Errorf("switch %s (%s): gnmi: %w", t.Device, t.Addr, err)
	}
	defer conn.Close()
	client := pb.NewGNMIClient(conn)
	var wg sync.WaitGroup
	errs := make(chan error, len(byTarget))
	for target, paths := range byTarget {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &subStream{client: client, t: t, target: target, paths: paths, names: strings.Join(names[target], " "),
				o: o, sink: sink, last: map[string]int64{}, unreadable: map[string][]*unreadableRun{}}
			errs <- s.run(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for e := range errs {
		if e != nil && !errors.Is(e, context.Canceled) {
			all = append(all, e)
		}
	}
	return errors.Join(all...)
}

// subStream keeps one subscription alive, recording gaps.
type subStream struct {
	client       pb.GNMIClient
	t            GNMITarget
	target       string
	paths        []*pb.Path
	names        string // the subscription paths, for gap records
	o            GNMIOptions
	sink         Sink
	last         map[string]int64 // newest sample per notification prefix, across reconnects
	lastSeen     time.Time        // newest sample of the stream
	broke        *brokenStream    // set from a break until samples flow again
	reconnecting bool
	unreadable   map[string][]*unreadableRun // by notification prefix: its keys' runs of unreadable values (unreadable.go)
}

// brokenStream is a break not yet recorded: when it happened and why.
type brokenStream struct {
	at    time.Time
	since int64
	err   error
}

func (s *subStream) run(ctx context.Context) error {
	o := s.o
	backoff := o.Reconnect
	for {
		err := s.subscribeOnce(ctx, func() { backoff = o.Reconnect })
		if ctx.Err() != nil {
			if s.broke != nil { // never came back: the gap runs to the end
				now := time.Now()
				s.writeGap(context.WithoutCancel(ctx), fmt.Sprintf("stream broken (%v) and not back when collection ended", s.broke.err), now.UnixNano(), now)
			}
			if pts := s.endUnreadable(nil); len(pts) > 0 { // runs of unreadable values still going
				if err := s.sink.Write(context.WithoutCancel(ctx), pts); err != nil {
					o.Logger.Error("could not record a telemetry gap", "device", s.t.Device, "err", err)
				}
			}
			return ctx.Err()
		}
		if s.broke == nil {
			s.broke = &brokenStream{at: time.Now(), err: err}
			if !s.lastSeen.IsZero() { // UnixNano of the zero time is not 0
				s.broke.since = s.lastSeen.UnixNano()
			}
			o.Logger.Warn("gnmi stream broke; resubscribing", "device", s.t.Device, "target", s.target, "err", err)
		}
		s.reconnecting = true
		select {
		case <-ctx.Done():
			continue // records the gap above
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, ReconnectCap(o.Interval))
	}
}

// writeGap records the pending break as a collector_gap ending at until
// (sample time, unix ns), noticed at now.
func (s *subStream) writeGap(ctx context.Context, reason string, until int64, now time.Time) {
	b := s.broke
	s.broke = nil
	since := b.since
	if since == 0 { // no sample before the break: the gap starts at the break
		since = b.at.UnixNano()
	}
	gap := gapPoint(s.o, s.t.Device, s.target, reason, since, until)
	gap.Path, gap.BrokeAt, gap.ResumedAt = s.names, b.at, now
	if err := s.sink.Write(ctx, []Point{gap.Point(s.o.Lab, s.o.Run, now)}); err != nil {
		s.o.Logger.Error("could not record a telemetry gap", "device", s.t.Device, "err", err)
	}
}

func (s *subStream) subscribeOnce(ctx context.Context, connected func()) error {
	o, t := s.o, s.t
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sc, err := s.client.Subscribe(sctx, grpc.ForceCodecV2(newSubscribeCodec())) // codec.go
	if err != nil {
		return err
	}
	var subs []*pb.Subscription
	for _, p := range s.paths {
		subs = append(subs, &pb.Subscription{Path: p, Mode: pb.SubscriptionMode_SAMPLE, SampleInterval: uint64(o.Interval)})
	}
	req := &pb.SubscribeRequest{Request: &pb.SubscribeRequest_Subscribe{Subscribe: &pb.SubscriptionList{
		Prefix: &pb.Path{Target: s.target}, Mode: pb.SubscriptionList_STREAM, Encoding: pb.Encoding_PROTO, Subscription: subs,
	}}}
	if err := sc.Send(req); err != nil {
		return err
	}
	for {
		resp, err := sc.Recv()
		if err != nil {
			return err
		}
		connected()
		n := resp.GetUpdate()
		if n == nil {
			continue // sync_response
		}
		k := strings.Join(path.ToStrings(n.GetPrefix(), true), "/")
		ts := n.GetTimestamp()
		if s.reconnecting && ts <= s.last[k] {
			continue // the target's cache resends what came before the break
		}
		pts, bad := Decode(n, t.Device, o.Lab, o.Run)
		if gap, ok := coalesced(n, s.last[k], s.lastSeen, t.Device, s.target, o); ok {
			pts = append(pts, gap)
		}
		pts = s.noteUnreadable(pts, k, bad, ts) // unreadable.go
		s.last[k] = max(s.last[k], ts)
		if len(pts) == 0 {
			continue
		}
		if s.broke != nil {
			s.writeGap(ctx, fmt.Sprintf("stream broken: %v", s.broke.err), ts, time.Now())
		}
		s.lastSeen = time.Unix(0, max(ts, s.lastSeen.UnixNano()))
		if err := s.sink.Write(ctx, pts); err != nil {
			o.Logger.Error("telemetry sink write failed", "device", t.Device, "err", err)
		}
	}
}

// coalesced is the collector_gap of a notification that stands for
// samples the target dropped: gNMI targets (openconfig/gnmi's subscribe
// server among them) coalesce updates of one path that the client has not
// read yet and send the newest with Update.Duplicates counting the others.
// The gap runs from the previous sample of the same path (prev; the
// stream's last sample when there was none) to this one.
func coalesced(n *pb.Notification, prev int64, streamLast time.Time, device, target string, o GNMIOptions) (Point, bool) {
	var dups uint64
	for _, u := range n.GetUpdate() {
		dups += uint64(u.GetDuplicates())
	}
	if dups == 0 {
		return Point{}, false
	}
	ts := n.GetTimestamp()
	since := prev
	if since == 0 {
		since = ts
		if !streamLast.IsZero() {
			since = min(streamLast.UnixNano(), ts)
		}
	}
	p := FormatPath(device, n.GetPrefix())
	g := gapPoint(o, device, target, fmt.Sprintf("target coalesced %d samples of %s", dups, p), since, ts)
	g.Duplicates, g.Path = dups, p
	return g.Point(o.Lab, o.Run, time.Unix(0, ts)), true
}

// gapPoint is the gap of a device's telemetry from since to until (unix
// ns), and why.
func gapPoint(o GNMIOptions, device, target, reason string, since, until int64) Gap {
	return Gap{Device: device, Target: target, Reason: reason, Since: time.Unix(0, since), Until: time.Unix(0, until),
		Interval: o.Interval}
}

// Decode maps one notification to points of the schema (the paths of
// GNMIMaps); unknown paths yield nothing. A notification holding the
// IdleLeaf update gives points tagged idle.
//
// The key a value belongs to (a port, a queue) is the prefix and the
// update's path up to its leaf, so a server may put the key in either:
// the emulated switches' prefixes hold it, sonic-gnmi's updates do. An
// update whose value is a JSON_IETF object is a key sent whole, the way
// sonic-gnmi sends a COUNTERS_DB table key: its path is the key, its
// members the leaves (tablefields.go).
//
// A value of a known leaf that is not an unsigned integer (SONiC's "N/A",
// a negative or fractional number, another type) is no counter: Decode
// leaves it out of its point and says so in the keys' Unreadable, for the
// collector to record as a gap rather than drop in silence.
func Decode(n *pb.Notification, device, lab, run string) ([]Point, []Unreadable) {
	prefix := n.GetPrefix()
	var one [1]decodeKey // a notification nearly always holds one key
	keys := one[:0]
	idle := false
	for _, u := range n.GetUpdate() {
		el := u.GetPath().GetElem()
		blob := isObject(u.GetVal())
		if !blob {
			if len(el) == 0 {
				continue
			}
			if el[len(el)-1].GetName() == IdleLeaf && u.GetVal().GetBoolVal() {
				idle = true
				continue
			}
		}
		at := el
		if !blob {
			at = el[:len(el)-1]
		}
		i := slices.IndexFunc(keys, func(k decodeKey) bool { return sameElems(k.at, at) })
		if i < 0 {
			keys, i = append(keys, newDecodeKey(prefix, at, device, lab, run)), len(keys)
		}
		k := &keys[i]
		if k.m == nil {
			continue
		}
		if blob {
			bad, first := tableFields(u.GetVal().GetJsonIetfVal(), k.m.leaves, k.fields)
			if bad > 0 {
				k.unreadable(prefix, bad, string(first.key), string(first.val))
			}
			continue
		}
		leaf := el[len(el)-1].GetName()
		if name, ok := k.m.leaves[leaf]; ok {
			if v, ok := uintOf(u.GetVal()); ok {
				k.fields[name] = v
			} else {
				k.unreadable(prefix, 1, leaf, valueText(u.GetVal()))
			}
		}
	}
	var pts []Point
	var bad []Unreadable
	for _, k := range keys {
		if k.bad != nil {
			bad = append(bad, *k.bad)
		}
		if len(k.fields) == 0 {
			continue
		}
		if idle {
			k.tags[TagIdle] = IdleValue
		}
		pts = append(pts, Point{Measurement: k.m.meas, Tags: k.tags, Fields: k.fields, Time: time.Unix(0, n.GetTimestamp())})
	}
	return pts, bad
}

// Unreadable is what Decode could not read of one key of a notification:
// Count values of known leaves, the first of them Leaf = Value (a whole
// key's object that is not JSON: Leaf empty, Value its start).
type Unreadable struct {
	Key, Leaf, Value string
	Count            int
}

// unreadable counts n values of k that could not be read, keeping the
// first. Rare, so the key's name is made only here.
func (k *decodeKey) unreadable(prefix *pb.Path, n int, leaf, value string) {
	if k.bad == nil {
		p := &pb.Path{Target: prefix.GetTarget(), Elem: append(slices.Clip(prefix.GetElem()), k.at...)}
		key := FormatPath(k.tags[TagDevice], p)
		const most = 40 // a value is shown, not archived: enough to see what it was
		if len(value) > most {
			value = value[:most] + "..."
		}
		k.bad = &Unreadable{Key: key, Leaf: leaf, Value: value}
	}
	k.bad.Count += n
}

// valueText is a gNMI value as text, for an Unreadable: a string or JSON
// as it came, anything else in protobuf's text form, which names its type
// (double_val:1.5).
func valueText(v *pb.TypedValue) string {
	switch x := v.GetValue().(type) {
	case *pb.TypedValue_StringVal:
		return x.StringVal
	case *pb.TypedValue_JsonIetfVal:
		return string(x.JsonIetfVal)
	case *pb.TypedValue_JsonVal:
		return string(x.JsonVal)
	}
	return v.String()
}

// decodeKey is one key of a notification: the elements after the prefix
// that name it, the map it matched (nil: none) and its point's tags and
// fields.
type decodeKey struct {
	at     []*pb.PathElem
	m      *decodeMap
	tags   map[string]string
	fields map[string]any
	bad    *Unreadable
}

// newDecodeKey is the key the prefix and elements at name: the map it
// matches, if any, with its tags.
func newDecodeKey(prefix *pb.Path, at []*pb.PathElem, device, lab, run string) decodeKey {
	k := decodeKey{at: at, tags: map[string]string{TagLab: lab, TagRun: run, TagDevice: device}}
	p := prefix
	if len(at) > 0 {
		p = &pb.Path{Target: prefix.GetTarget(), Elem: append(slices.Clip(prefix.GetElem()), at...)}
	}
	for i := range decodeMaps {
		if decodeMaps[i].match(p, k.tags) {
			k.m, k.fields = &decodeMaps[i], map[string]any{}
			break
		}
	}
	return k
}

func sameElems(a, b []*pb.PathElem) bool {
	return slices.EqualFunc(a, b, func(x, y *pb.PathElem) bool {
		return x.GetName() == y.GetName() && maps.Equal(x.GetKey(), y.GetKey())
	})
}

// decodeMaps are gnmiMaps made ready for matching; read only.
var decodeMaps = func() []decodeMap {
	var out []decodeMap
	for _, g := range gnmiMaps() {
		out = append(out, newDecodeMap(g))
	}
	return out
}()

// decodeMap matches a notification prefix to one GNMIMap. An element
// written <a>:<b> matches any name with one colon and fills tags a and b
// from its parts; a key [k=<t>] fills tag t from key k.
type decodeMap struct {
	countersDB bool
	tags       map[string]string // fixed
	elems      []elemRule
	meas       string
	leaves     map[string]string
}

type elemRule struct {
	name     string
	nameTags []string          // set: the element's name holds these tags, colon separated
	keyTags  map[string]string // key → tag
}

func newDecodeMap(g GNMIMap) decodeMap {
	d := decodeMap{countersDB: g.Target == CountersDB, meas: g.Measurement, leaves: g.Leaves, tags: g.Tags}
	for _, part := range splitPath(strings.TrimPrefix(g.Prefix, "/")) {
		name, keys, _ := strings.Cut(part, "[")
		r := elemRule{name: name}
		if strings.HasPrefix(name, "<") {
			for _, t := range strings.Split(name, ":") {
				r.nameTags = append(r.nameTags, strings.Trim(t, "<>"))
			}
		}
		if keys != "" {
			r.keyTags = map[string]string{}
			for _, kv := range strings.Split(strings.TrimSuffix(keys, "]"), "][") {
				k, v, _ := strings.Cut(kv, "=")
				r.keyTags[k] = strings.Trim(v, "<>")
			}
		}
		d.elems = append(d.elems, r)
	}
	return d
}

// match says whether prefix is d's, and then fills tags.
func (d *decodeMap) match(prefix *pb.Path, tags map[string]string) bool {
	elems := prefix.GetElem()
	if (prefix.GetTarget() == CountersDB) != d.countersDB || len(elems) != len(d.elems) {
		return false
	}
	for i, r := range d.elems {
		name := elems[i].GetName()
		if r.nameTags != nil {
			if strings.Count(name, ":") != len(r.nameTags)-1 {
				return false
			}
		} else if name != r.name {
			return false
		}
	}
	for i, r := range d.elems {
		if r.nameTags != nil {
			for j, v := range strings.SplitN(elems[i].GetName(), ":", len(r.nameTags)) {
				tags[r.nameTags[j]] = v
			}
		}
		for k, t := range r.keyTags {
			tags[t] = elems[i].GetKey()[k]
		}
	}
	for k, v := range d.tags {
		tags[k] = v
	}
	return true
}

func uintOf(v *pb.TypedValue) (uint64, bool) {
	switch x := v.GetValue().(type) {
	case *pb.TypedValue_UintVal:
		return x.UintVal, true
	case *pb.TypedValue_IntVal:
		return uint64(x.IntVal), x.IntVal >= 0
	case *pb.TypedValue_StringVal:
		u, err := strconv.ParseUint(x.StringVal, 10, 64)
		return u, err == nil
	case *pb.TypedValue_JsonIetfVal:
		u, err := strconv.ParseUint(strings.Trim(string(x.JsonIetfVal), `"`), 10, 64)
		return u, err == nil
	}
	return 0, false
}

// ParsePath parses "/a/b[k=v]/c" into a gNMI path.
func ParsePath(s string) (*pb.Path, error) {
	s = strings.TrimPrefix(s, "/")
	p := &pb.Path{}
	if s == "" {
		return p, nil
	}
	for _, part := range splitPath(s) {
		name, keys, _ := strings.Cut(part, "[")
		e := &pb.PathElem{Name: name}
		if name == "" {
			return nil, fmt.Errorf("empty element in %q", s)
		}
		if keys != "" {
			e.Key = map[string]string{}
			for _, kv := range strings.Split(strings.TrimSuffix(keys, "]"), "][") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return nil, fmt.Errorf("bad key %q in %q", kv, s)
				}
				e.Key[k] = v
			}
		}
		p.Elem = append(p.Elem, e)
	}
	return p, nil
}

// FormatPath spells a notification's path as GNMIOptions.Paths spell
// theirs (ParsePath's syntax): "/elem[key=value]/...", with "TARGET:" in
// front when the target is not the device's own, as in
// "COUNTERS_DB:/COUNTERS/Ethernet0". Gaps name their paths so, whether a
// stream broke, a target coalesced or a value was unreadable.
func FormatPath(device string, p *pb.Path) string {
	var b strings.Builder
	if t := p.GetTarget(); t != "" && t != device {
		b.WriteString(t)
		b.WriteByte(':')
	}
	for _, e := range p.GetElem() {
		b.WriteByte('/')
		b.WriteString(e.GetName())
		for _, k := range slices.Sorted(maps.Keys(e.GetKey())) {
			fmt.Fprintf(&b, "[%s=%s]", k, e.GetKey()[k])
		}
	}
	if b.Len() == 0 || strings.HasSuffix(b.String(), ":") {
		b.WriteByte('/')
	}
	return b.String()
}

// splitPath splits at '/' outside [...] (key values such as 1/0 hold slashes).
func splitPath(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '/':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
