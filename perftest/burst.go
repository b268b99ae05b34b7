package perftest

import (
	"fmt"
	"time"
)

// The defaults of a burst over background are FLB's HoL-blocking
// micro-benchmark (seeds digest, section 2.3): three 250 MB long flows
// from one rack to another, then 14 senders of the receiver's rack each
// send 40 flows of 64 KB to one receiver at line rate, from 40 ms on.
const (
	DefaultBurstBackground      = 3
	DefaultBurstBackgroundBytes = 250_000_000
	DefaultBurstSenders         = 14
	DefaultBursts               = 40
	DefaultBurstBytes           = 64 << 10
	DefaultBurstStart           = 40 * time.Millisecond
)

// BurstParams: long background flows plus synchronized bursts of short
// flows to one receiver. Zero values take the FLB defaults above, except
// Start: 0 starts the bursts with the background (callers that want FLB's
// timing pass DefaultBurstStart).
type BurstParams struct {
	Hosts []Endpoint
	// Racks maps host -> rack and places the flows as FLB does (see
	// Burst); without it all hosts count as one rack.
	Racks map[string]string
	// Receiver of the bursts (a host name); default: the first host of
	// the last rack.
	Receiver        string
	Background      int
	BackgroundBytes int64
	Senders         int // hosts sending in every burst
	Bursts          int
	BurstBytes      int64 // per flow of a burst
	// Start is the first burst's offset; Interval the time between bursts
	// (default: back to back at the receiver's line rate, Senders x
	// BurstBytes x 8 / LinkGbps).
	Start    time.Duration
	Interval time.Duration
	LinkGbps float64
	MsgSize  int64
	QPs      int
	Tool     string
	BasePort int
	Group    string
}

func (p *BurstParams) defaults() {
	if p.Background == 0 {
		p.Background = DefaultBurstBackground
	}
	if p.BackgroundBytes == 0 {
		p.BackgroundBytes = DefaultBurstBackgroundBytes
	}
	if p.Senders == 0 {
		p.Senders = DefaultBurstSenders
	}
	if p.Bursts == 0 {
		p.Bursts = DefaultBursts
	}
	if p.BurstBytes == 0 {
		p.BurstBytes = DefaultBurstBytes
	}
	if p.Interval == 0 && p.LinkGbps > 0 {
		p.Interval = time.Duration(float64(int64(p.Senders)*p.BurstBytes*8) / p.LinkGbps)
	}
	if p.MsgSize <= 0 {
		p.MsgSize = 64 << 10
	}
}

// Burst builds a burst over background, as in FLB's HoL-blocking
// experiment. Placement (racks in order of first appearance):
//   - the background flows run from hosts of another rack than the
//     receiver's to the receiver and Background-1 other hosts of its rack,
//     the receiver's flow last (FLB's f2 to R2), all at offset 0;
//   - Bursts bursts, Interval apart from Start: in each, every one of the
//     Senders burst senders (the other hosts of the receiver's rack first,
//     then hosts of other racks, never a background host) sends one flow
//     of BurstBytes to the receiver.
//
// Flow steps: 0 for background flows, k+1 for the flows of burst k.
func Burst(p BurstParams) ([]Flow, error) {
	p.defaults()
	if p.Background < 0 || p.Senders < 1 || p.Bursts < 1 || p.BackgroundBytes <= 0 || p.BurstBytes <= 0 || p.Interval <= 0 || p.Start < 0 {
		return nil, fmt.Errorf("burst: background >= 0, senders, bursts, sizes and interval > 0 and start >= 0 are needed")
	}
	if err := checkCommon(p.Tool, p.BurstBytes, p.MsgSize); err != nil {
		return nil, fmt.Errorf("burst: %w", err)
	}
	byName := map[string]Endpoint{}
	var racks []string
	inRack := map[string][]string{}
	for _, h := range p.Hosts {
		byName[h.Host] = h
		r := p.Racks[h.Host]
		if _, ok := inRack[r]; !ok {
			racks = append(racks, r)
		}
		inRack[r] = append(inRack[r], h.Host)
	}
	if len(racks) == 0 {
		return nil, fmt.Errorf("burst: no hosts")
	}
	recv := p.Receiver
	if recv == "" {
		recv = inRack[racks[len(racks)-1]][0]
	}
	if _, ok := byName[recv]; !ok {
		return nil, fmt.Errorf("burst: receiver %s is not among the hosts", recv)
	}
	home := p.Racks[recv]
	used := map[string]bool{recv: true}
	take := func(n int, fromRacks []string) []string {
		var out []string
		for _, r := range fromRacks {
			for _, h := range inRack[r] {
				if len(out) < n && !used[h] {
					used[h] = true
					out = append(out, h)
				}
			}
		}
		return out
	}
	others := make([]string, 0, len(racks))
	for _, r := range racks {
		if r != home {
			others = append(others, r)
		}
	}
	// Background receivers from the home rack, senders from the others
	// (from the home rack too when it is the only one).
	bgRecv := append(take(p.Background-1, append([]string{home}, others...)), recv)
	if p.Background == 0 {
		bgRecv = nil
	}
	bgSend := take(p.Background, append(others, home))
	burst := take(p.Senders, append([]string{home}, others...))
	if len(bgSend) < p.Background || len(bgRecv) < p.Background || len(burst) < p.Senders {
		need := p.Senders
		if p.Background > 0 {
			need += 2*p.Background - 1
		}
		return nil, fmt.Errorf("burst: %d background flows and %d burst senders need %d hosts besides the receiver; %d are given",
			p.Background, p.Senders, need, len(p.Hosts)-1)
	}
	ports, err := newPorts(p.BasePort)
	if err != nil {
		return nil, fmt.Errorf("burst: %w", err)
	}
	flows := make([]Flow, 0, p.Background+p.Bursts*p.Senders)
	add := func(src, dst string, size int64, off time.Duration, step int) {
		f := flow(len(flows), byName[src], byName[dst], p.Tool, size, messageFor(size, p.MsgSize), p.QPs, ports.of(dst), p.Group, step)
		f.Offset = off
		flows = append(flows, f)
	}
	for i := range bgSend {
		add(bgSend[i], bgRecv[i], p.BackgroundBytes, 0, 0)
	}
	for k := 0; k < p.Bursts; k++ {
		for _, s := range burst {
			add(s, recv, p.BurstBytes, p.Start+time.Duration(k)*p.Interval, k+1)
		}
	}
	return flows, nil
}
