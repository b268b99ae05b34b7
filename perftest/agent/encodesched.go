package agent

import (
	"io"
	"strconv"

	"github.com/labctl/labctl/perftest"
)

// AppendSchedule appends s's JSON, byte for byte what json.Marshal writes
// (TestAppendScheduleWritesWhatMarshalWrites, FuzzAppendSchedule): the
// runner sends each host its part of a point's schedule, some 130 MB of
// JSON for a point of 200,000 flows, and Marshal's reflection is a fifth
// of this speed (BenchmarkAppendSchedule). Like Marshal, it refuses an
// epoch MarshalJSON refuses (a year outside 0-9999).
func AppendSchedule(b []byte, s *perftest.Schedule) ([]byte, error) {
	return encodeSchedule(b, s, nil)
}

// WriteSchedule writes s's JSON (AppendSchedule's) to w through a small
// buffer: a point's whole schedule, tens of megabytes, is never one
// slice. One allocation that large, made while the collector marks, has
// the allocating goroutine do marking in proportion to it: writing the
// 43 MB of a 200,000-flow schedule that way took 0.7-1.2 s, against some
// 40 ms of encoding.
func WriteSchedule(w io.Writer, s *perftest.Schedule) error {
	_, err := encodeSchedule(make([]byte, 0, 64<<10), s, func(b []byte) ([]byte, error) {
		_, err := w.Write(b)
		return b[:0], err
	})
	return err
}

// encodeSchedule appends s's JSON to b; with flush, b goes to flush
// whenever it holds 60 KB and at the end.
func encodeSchedule(b []byte, s *perftest.Schedule, flush func([]byte) ([]byte, error)) ([]byte, error) {
	b = appendKeyString(b, `{"id":`, s.ID)
	epoch, err := s.Epoch.MarshalJSON()
	if err != nil {
		return b, err
	}
	b = append(append(b, `,"epoch":`...), epoch...)
	if s.Host != "" {
		b = appendKeyString(b, `,"host":`, s.Host)
	}
	if s.PointFlows != 0 {
		b = appendKeyInt(b, `,"point_flows":`, int64(s.PointFlows))
	}
	if s.HostFlows != 0 {
		b = appendKeyInt(b, `,"host_flows":`, int64(s.HostFlows))
	}
	b = append(b, `,"flows":`...)
	if s.Flows == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range s.Flows {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFlow(b, &s.Flows[i])
			if flush != nil && len(b) >= 60<<10 {
				if b, err = flush(b); err != nil {
					return b, err
				}
			}
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	if flush != nil {
		return flush(b)
	}
	return b, nil
}

func appendFlow(b []byte, f *perftest.Flow) []byte {
	b = appendKeyInt(b, `{"id":`, int64(f.ID))
	b = appendKeyString(b, `,"src":`, f.Src)
	b = appendKeyString(b, `,"dst":`, f.Dst)
	b = appendKeyString(b, `,"src_dev":`, f.SrcDev)
	b = appendKeyString(b, `,"dst_dev":`, f.DstDev)
	b = appendKeyString(b, `,"dst_addr":`, f.DstAddr)
	b = appendKeyInt(b, `,"gid_index":`, int64(f.GIDIdx))
	b = appendKeyString(b, `,"tool":`, f.Tool)
	b = appendKeyInt(b, `,"bytes":`, f.Bytes)
	b = appendKeyInt(b, `,"msg_size":`, f.MsgSize)
	b = appendKeyInt(b, `,"qps":`, int64(f.QPs))
	b = appendKeyInt(b, `,"port":`, int64(f.Port))
	if f.TClass != 0 {
		b = appendKeyInt(b, `,"tclass":`, int64(f.TClass))
	}
	b = appendKeyInt(b, `,"offset_ns":`, int64(f.Offset))
	if len(f.After) > 0 {
		b = append(b, `,"after":[`...)
		for i, a := range f.After {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(a), 10)
		}
		b = append(b, ']')
	}
	if f.Group != "" {
		b = appendKeyString(b, `,"group":`, f.Group)
	}
	if f.Step != 0 {
		b = appendKeyInt(b, `,"step":`, int64(f.Step))
	}
	return append(b, '}')
}
