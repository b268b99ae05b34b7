package reunion

import (
	"flag"
	"fmt"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/emulator/fabric/lb/lbtest"
)

var sweep = flag.Bool("sweep", false, "run TestDecaySweep (about a minute of CPU)")

// marks watches a module and counts, per flow, the data packets leaving
// their source ToR and those of them marked elephant.
type marks struct {
	lb.Module
	sent, marked map[int32]int64
}

func (w *marks) Arrive(sw lb.Switch, p *lb.Packet, out lb.Egress) lb.Queue {
	if p.Kind == lb.Data && p.Role == lb.SrcToR {
		w.sent[p.Flow]++
		if p.Hdr.Flags&flagElephant != 0 {
			w.marked[p.Flow]++
		}
	}
	return w.Module.(lb.Arriver).Arrive(sw, p, out)
}

func (w *marks) Receive(sw lb.Switch, p *lb.Packet) { w.Module.(lb.Receiver).Receive(sw, p) }
func (w *marks) Tick(sw lb.Switch, arg int64)       { w.Module.(lb.Ticker).Tick(sw, arg) }
func (w *marks) Reset(sw lb.Switch)                 { w.Module.(lb.Resetter).Reset(sw) }

// TestDecaySweep chooses cms_decay, which the paper leaves out. On 8
// spines x 4 leaves x 8 hosts at 100 Gb/s, with s = 100 us: phase 1 is a
// ring of 16 MiB elephants between racks from hosts 1-4 of each rack;
// phase 2, from 2.5 ms (after phase 1 ends), a ring from all 8 hosts;
// throughout, 64 KiB mice between random hosts, one every 2 us (about
// 1 Gb/s a host; two seeds of mice). Per decay it logs the share of mouse packets marked
// elephant, the share of phase-2 elephant packets not marked (stale
// phase-1 counts holding the hot set), phase 2's longest FCT, reroutes
// and out-of-sequence packets. Run with -sweep; docs/fabric-twin.md has
// the table.
func TestDecaySweep(t *testing.T) {
	if !*sweep {
		t.Skip("-sweep not given")
	}
	topo, _ := lbtest.Topology(t, "leafspine:8x4:8@100", nil)
	for _, seed := range []uint64{3, 4} {
		sweepDecay(t, topo, seed)
	}
}

func sweepDecay(t *testing.T, topo *fabric.Topology, seed uint64) {
	const hosts, leaves = 8, 4
	var fs []fabric.Flow
	add := func(src, dst int, bytes, start int64) {
		fs = append(fs, fabric.Flow{ID: len(fs), Src: fmt.Sprintf("h%d", src), Dst: fmt.Sprintf("h%d", dst), Bytes: bytes, Start: start, Priority: 3})
	}
	phase2 := map[int]bool{}
	for l := 0; l < leaves; l++ {
		for h := 1; h <= hosts; h++ {
			src, dst := l*hosts+h, (l+1)%leaves*hosts+h
			if h <= 4 {
				add(src, dst, 16<<20, 0)
			}
			phase2[len(fs)] = true
			add(src, dst, 16<<20, 2_500_000)
		}
	}
	mice := map[int]bool{}
	r := lb.NewRand(seed)
	for at := int64(0); at < 6_000_000; at += 2_000 {
		src := 1 + int(r.Next(0)%(hosts*leaves))
		dst := 1 + int(r.Next(1)%(hosts*leaves-1))
		if dst >= src {
			dst++
		}
		mice[len(fs)] = true
		add(src, dst, 64<<10, at)
	}
	t.Logf("mice seed %d, %d flows: %d elephants in phase 2, %d mice", seed, len(fs), len(phase2), len(mice))
	for _, decay := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		m := newModule(t, map[string]string{"interval_us": "100", "cms_decay": decay})
		w := &marks{Module: m, sent: map[int32]int64{}, marked: map[int32]int64{}}
		o := lbtest.Run(t, topo, fabric.DefaultConfig(), w, nil, fs)
		var miceSent, miceMarked, elSent, elMissed, last int64
		for i, res := range o.Results {
			f := int32(res.ID)
			switch {
			case mice[i]:
				miceSent, miceMarked = miceSent+w.sent[f], miceMarked+w.marked[f]
			case phase2[i]:
				elSent, elMissed = elSent+w.sent[f], elMissed+w.sent[f]-w.marked[f]
				last = max(last, res.End-res.Start)
			}
		}
		s := m.Stats()
		t.Logf("decay %-4s mice marked %6.2f %%  phase-2 elephant packets unmarked %6.2f %%  phase-2 max FCT %5d us  reroutes %3d (no path %3d)  OOO %d",
			decay, 100*float64(miceMarked)/float64(miceSent), 100*float64(elMissed)/float64(elSent), last/1000, s.Reroutes, s.NoPath, o.OOO)
	}
}
