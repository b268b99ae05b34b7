package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/labctl/labctl/perftest"
)

// Decoders of the agent's files on scanner (scan.go), field by field, as
// json.Unmarshal decodes them: a result's records and a schedule's flows.
// TestEncodersKnowEveryField lists the fields they know.

// object scans an object whose keys are among names, with value scanning
// the value of names[i] (i is -1 for a key not among them).
func (s *scanner) object(names []string, value func(i int) error) error {
	more, err := s.open('{', '}')
	last := -1
	for more && err == nil {
		var k []byte
		if k, err = s.key(); err != nil {
			return err
		}
		last = field(k, names, last)
		if err = value(last); err == nil {
			more, err = s.next('}')
		}
	}
	return err
}

var recordFields = []string{"flow_id", "src", "dst", "bytes", "start_ns", "end_ns", "lag_ns", "status", "tool", "group", "step", "error", "output", "result"}

// record decodes a flow record into rec; with output false its output is
// scanned past, never unescaped.
func (s *scanner) record(rec *perftest.FlowRecord, output bool) error {
	if null, err := s.null(); null || err != nil {
		return err
	}
	return s.object(recordFields, func(i int) (err error) {
		switch i {
		case 0:
			err = s.intValue(&rec.FlowID)
		case 1:
			err = s.stringValue(&rec.Src)
		case 2:
			err = s.stringValue(&rec.Dst)
		case 3:
			err = s.int64Value(&rec.Bytes)
		case 4:
			err = s.int64Value(&rec.StartNs)
		case 5:
			err = s.int64Value(&rec.EndNs)
		case 6:
			err = s.int64Value(&rec.LagNs)
		case 7:
			err = s.stringValue(&rec.Status)
		case 8:
			err = s.stringValue(&rec.Tool)
		case 9:
			err = s.stringValue(&rec.Group)
		case 10:
			err = s.intValue(&rec.Step)
		case 11:
			err = s.stringValue(&rec.Error)
		case 12:
			if output {
				err = s.stringValue(&rec.Output)
			} else {
				err = s.skip(0)
			}
		case 13:
			err = s.bwResult(&rec.Result)
		default:
			err = s.skip(0)
		}
		return err
	})
}

var bwFields = []string{"bytes", "iterations", "bw_peak", "bw_average", "msg_rate"}

// bwResult decodes a result row into *r (null: nil; an object into the
// one *r points to, new if none, as encoding/json does).
func (s *scanner) bwResult(r **perftest.BWResult) error {
	if null, err := s.null(); null || err != nil {
		if null {
			*r = nil
		}
		return err
	}
	if c, _ := s.peek(); c != '{' {
		return s.typeError(c, "result row")
	}
	if *r == nil {
		*r = new(perftest.BWResult)
	}
	bw := *r
	return s.object(bwFields, func(i int) (err error) {
		switch i {
		case 0:
			err = s.int64Value(&bw.Bytes)
		case 1:
			err = s.int64Value(&bw.Iterations)
		case 2:
			err = s.float64Value(&bw.PeakGbps)
		case 3:
			err = s.float64Value(&bw.AvgGbps)
		case 4:
			err = s.float64Value(&bw.MsgRateMpps)
		default:
			err = s.skip(0)
		}
		return err
	})
}

// list scans a list (or null) calling item for each element.
func (s *scanner) list(item func() error) error {
	if null, err := s.null(); null || err != nil {
		return err
	}
	if c, _ := s.peek(); c != '[' {
		return fmt.Errorf("want a list, found %q", c)
	}
	more, err := s.open('[', ']')
	for more && err == nil {
		if err = item(); err == nil {
			more, err = s.next(']')
		}
	}
	return err
}

func readResult(r io.Reader, output bool, rec func(head *Result, r perftest.FlowRecord) error) (*Result, error) {
	s := newScanner(r)
	head := &Result{}
	rest := map[string]json.RawMessage{}
	more, err := s.open('{', '}')
	if err != nil {
		return nil, err
	}
	for more {
		k, err := s.key()
		if err != nil {
			return nil, err
		}
		key := string(k)
		switch key {
		case "records":
			err = s.list(func() error {
				var fr perftest.FlowRecord
				if err := s.record(&fr, output); err != nil {
					return err
				}
				return rec(head, fr)
			})
		case "servers":
			err = s.list(func() error { // objects (or null), as a decode into struct{} checks
				if c, _ := s.peek(); c != '{' && c != 'n' {
					return s.typeError(c, "server run")
				}
				return s.skip(0)
			})
		default:
			var raw []byte
			if raw, err = s.raw(); err == nil {
				rest[key] = raw
				// Refresh the head, so records see the fields before them.
				b, _ := json.Marshal(rest)
				err = json.Unmarshal(b, head)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if more, err = s.next('}'); err != nil {
			return nil, err
		}
	}
	head.Records, head.Servers = nil, nil
	return head, nil
}

var scheduleFields = []string{"id", "epoch", "host", "point_flows", "host_flows", "flows"}

// schedule decodes a schedule into sched.
func (s *scanner) schedule(sched *perftest.Schedule) error {
	if null, err := s.null(); null || err != nil {
		return err
	}
	return s.object(scheduleFields, func(i int) (err error) {
		switch i {
		case 0:
			err = s.stringValue(&sched.ID)
		case 1:
			err = s.time(&sched.Epoch)
		case 2:
			err = s.stringValue(&sched.Host)
		case 3:
			err = s.intValue(&sched.PointFlows)
		case 4:
			err = s.intValue(&sched.HostFlows)
		case 5:
			err = s.flows(&sched.Flows, sched.HostFlows)
		default:
			err = s.skip(0)
		}
		return err
	})
}

// time decodes a time as encoding/json does: its UnmarshalJSON on the
// value's text.
func (s *scanner) time(t *time.Time) error {
	raw, err := s.raw()
	if err != nil {
		return err
	}
	return t.UnmarshalJSON(raw)
}

// maxPresize bounds the list a schedule's host_flows sizes up front (a
// part of 65,536 flows is some 14 MB): a count from outside input never
// allocates more than that before the flows themselves arrive.
const maxPresize = 1 << 16

// flows decodes a list of flows into *fl: null leaves it nil, a list
// (even an empty one) makes it non-nil, as encoding/json does. want, the
// count the schedule announces, sizes the list (up to maxPresize).
func (s *scanner) flows(fl *[]perftest.Flow, want int) error {
	if null, err := s.null(); null || err != nil {
		if null {
			*fl = nil
		}
		return err
	}
	if *fl == nil || cap(*fl) < want {
		*fl = make([]perftest.Flow, 0, min(max(want, 0), maxPresize))
	}
	*fl = (*fl)[:0]
	return s.list(func() error {
		*fl = append(*fl, perftest.Flow{})
		return s.flow(&(*fl)[len(*fl)-1])
	})
}

var flowFields = []string{"id", "src", "dst", "src_dev", "dst_dev", "dst_addr", "gid_index", "tool", "bytes", "msg_size", "qps", "port",
	"tclass", "offset_ns", "after", "group", "step"}

// flow decodes a flow into f.
func (s *scanner) flow(f *perftest.Flow) error {
	if null, err := s.null(); null || err != nil {
		return err
	}
	return s.object(flowFields, func(i int) (err error) {
		switch i {
		case 0:
			err = s.intValue(&f.ID)
		case 1:
			err = s.stringValue(&f.Src)
		case 2:
			err = s.stringValue(&f.Dst)
		case 3:
			err = s.stringValue(&f.SrcDev)
		case 4:
			err = s.stringValue(&f.DstDev)
		case 5:
			err = s.stringValue(&f.DstAddr)
		case 6:
			err = s.intValue(&f.GIDIdx)
		case 7:
			err = s.stringValue(&f.Tool)
		case 8:
			err = s.int64Value(&f.Bytes)
		case 9:
			err = s.int64Value(&f.MsgSize)
		case 10:
			err = s.intValue(&f.QPs)
		case 11:
			err = s.intValue(&f.Port)
		case 12:
			err = s.intValue(&f.TClass)
		case 13:
			n := int64(f.Offset)
			err = s.int64Value(&n)
			f.Offset = time.Duration(n)
		case 14:
			err = s.ints(&f.After)
		case 15:
			err = s.stringValue(&f.Group)
		case 16:
			err = s.intValue(&f.Step)
		default:
			err = s.skip(0)
		}
		return err
	})
}

// ints decodes a list of integers into *v as encoding/json does (null:
// nil; a list, even empty, non-nil; a null element: 0).
func (s *scanner) ints(v *[]int) error {
	if null, err := s.null(); null || err != nil {
		if null {
			*v = nil
		}
		return err
	}
	if c, _ := s.peek(); c != '[' {
		return s.typeError(c, "list of integers")
	}
	if *v == nil {
		*v = []int{}
	}
	*v = (*v)[:0]
	return s.list(func() error {
		*v = append(*v, 0)
		return s.intValue(&(*v)[len(*v)-1])
	})
}
