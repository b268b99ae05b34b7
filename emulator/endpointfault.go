package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/labctl/labctl/emulator/sshd"
)

// Endpoint is a device's management endpoint that a fault can drop or
// delay for a while.
type Endpoint string

const (
	EndpointSSH     Endpoint = "ssh"     // the device's SSH server (on a switch, NETCONF rides on it too)
	EndpointNETCONF Endpoint = "netconf" // a switch's "netconf" SSH subsystem
	EndpointGNMI    Endpoint = "gnmi"    // a switch's gNMI server
)

// gate is one endpoint's fault state: while dropping, its live
// connections (or NETCONF sessions) were closed and new ones are closed
// as soon as they arrive; while delaying, a new connection's first read
// and first write (a new NETCONF session's hello) wait for the delay.
type gate struct {
	mu         sync.Mutex
	dropUntil  time.Time
	delay      time.Duration
	delayUntil time.Time
	live       map[*liveConn]struct{}
}

// liveConn is something a drop closes: a connection or a NETCONF channel.
type liveConn struct{ close func() }

func newGate() *gate { return &gate{live: map[*liveConn]struct{}{}} }

// state says whether new connections are refused now, and how long a new
// one is held.
func (g *gate) state() (dropping bool, delay time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if now.Before(g.delayUntil) {
		delay = g.delay
	}
	return now.Before(g.dropUntil), delay
}

// drop closes every live connection and refuses new ones for d.
func (g *gate) drop(d time.Duration) int {
	g.mu.Lock()
	g.dropUntil = time.Now().Add(d)
	live := make([]*liveConn, 0, len(g.live))
	for c := range g.live {
		live = append(live, c)
	}
	g.mu.Unlock()
	for _, c := range live {
		c.close()
	}
	return len(live)
}

// hold delays new connections by delay for d.
func (g *gate) hold(delay, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.delay, g.delayUntil = delay, time.Now().Add(d)
}

// clear ends any drop or delay now.
func (g *gate) clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dropUntil, g.delayUntil = time.Time{}, time.Time{}
}

func (g *gate) track(close func()) *liveConn {
	c := &liveConn{close: close}
	g.mu.Lock()
	g.live[c] = struct{}{}
	g.mu.Unlock()
	return c
}

func (g *gate) untrack(c *liveConn) {
	g.mu.Lock()
	delete(g.live, c)
	g.mu.Unlock()
}

// listen wraps a listener with the gate.
func (g *gate) listen(l net.Listener) net.Listener { return &gatedListener{Listener: l, g: g} }

type gatedListener struct {
	net.Listener
	g *gate
}

// Accept hands the server only connections the gate lets through: during
// a drop a client connects (the kernel accepted it) and is closed at
// once, before a byte is exchanged, as a crashed daemon's port would.
func (l *gatedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		dropping, delay := l.g.state()
		if dropping {
			c.Close()
			continue
		}
		gc := &gatedConn{Conn: c, g: l.g, delay: delay}
		gc.live = l.g.track(func() { c.Close() })
		return gc, nil
	}
}

// gatedConn holds its first read and first write for delay (the peer
// sees a server that accepted but says nothing yet) and leaves the
// gate's live set when closed.
type gatedConn struct {
	net.Conn
	g     *gate
	live  *liveConn
	delay time.Duration
	once  sync.Once
	close sync.Once
}

func (c *gatedConn) wait() { c.once.Do(func() { time.Sleep(c.delay) }) }

func (c *gatedConn) Read(b []byte) (int, error) {
	c.wait()
	return c.Conn.Read(b)
}

func (c *gatedConn) Write(b []byte) (int, error) {
	c.wait()
	return c.Conn.Write(b)
}

func (c *gatedConn) Close() error {
	c.close.Do(func() { c.g.untrack(c.live) })
	return c.Conn.Close()
}

// errDropped ends a NETCONF session refused by a drop.
var errDropped = errors.New("netconf endpoint dropped (emulator fault)")

// subsystem wraps a NETCONF subsystem handler with the gate: a drop
// closes the live sessions' channels and refuses new sessions; a delay
// holds a new session's hello.
func (g *gate) subsystem(h sshd.SubsystemHandler) sshd.SubsystemHandler {
	return func(ctx context.Context, rw io.ReadWriter) error {
		dropping, delay := g.state()
		if dropping {
			return errDropped
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		live := g.track(func() {
			cancel()
			if c, ok := rw.(io.Closer); ok {
				c.Close() // unblocks the session's read
			}
		})
		defer g.untrack(live)
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return h(ctx, rw)
	}
}

// gates are the lab's endpoint gates by "device/endpoint", made as the
// lab starts its endpoints (possibly several at once).
type gates struct {
	mu sync.Mutex
	m  map[string]*gate
}

// endpointGate is the gate of device's endpoint ep, made on first use.
func (l *Lab) endpointGate(device string, ep Endpoint) *gate {
	l.gates.mu.Lock()
	defer l.gates.mu.Unlock()
	key := device + "/" + string(ep)
	g, ok := l.gates.m[key]
	if !ok {
		if l.gates.m == nil {
			l.gates.m = map[string]*gate{}
		}
		g = newGate()
		l.gates.m[key] = g
	}
	return g
}

// existingGate is the gate of device's endpoint ep if it has one.
func (l *Lab) existingGate(device string, ep Endpoint) (*gate, bool) {
	l.gates.mu.Lock()
	defer l.gates.mu.Unlock()
	g, ok := l.gates.m[device+"/"+string(ep)]
	return g, ok
}

// gateOf is the gate of device's endpoint ep, or an error naming what the
// device has.
func (l *Lab) gateOf(device string, ep Endpoint) (*gate, error) {
	if _, err := l.deviceKind(device); err != nil {
		return nil, err
	}
	g, ok := l.existingGate(device, ep)
	if !ok {
		return nil, fmt.Errorf("emulator: device %s has no %s endpoint (hosts have ssh only; switches ssh, netconf, gnmi)", device, ep)
	}
	return g, nil
}

// DropEndpoint makes device's endpoint ep fail for d: its live
// connections are closed now and new ones are closed as they arrive. It
// returns how many live connections it closed.
func (l *Lab) DropEndpoint(device string, ep Endpoint, d time.Duration) (int, error) {
	g, err := l.gateOf(device, ep)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("emulator: drop %s of %s: duration %s must be positive", ep, device, d)
	}
	return g.drop(d), nil
}

// DelayEndpoint makes device's endpoint ep slow for d: every connection
// (NETCONF: session) opened meanwhile gets no answer for delay.
func (l *Lab) DelayEndpoint(device string, ep Endpoint, delay, d time.Duration) error {
	g, err := l.gateOf(device, ep)
	if err != nil {
		return err
	}
	if d <= 0 || delay <= 0 {
		return fmt.Errorf("emulator: delay %s of %s: delay %s and duration %s must be positive", ep, device, delay, d)
	}
	g.hold(delay, d)
	return nil
}

// ClearEndpoints ends every drop and delay of device's endpoints now.
func (l *Lab) ClearEndpoints(device string) error {
	if _, err := l.deviceKind(device); err != nil {
		return err
	}
	for _, ep := range []Endpoint{EndpointSSH, EndpointNETCONF, EndpointGNMI} {
		if g, ok := l.existingGate(device, ep); ok {
			g.clear()
		}
	}
	return nil
}
