// Package lb is the interface between the fabric twin's packet engine and
// its switch load-balancing modules, and the registry that names them.
//
// A module (Module) picks a packet's egress link among the equal-cost
// candidates; optional interfaces let it see every packet at every switch
// hop (Arriver), every departure from a switch port (Dequeuer), control
// packets addressed to its switch (Receiver), its own timers (Ticker) and
// the start of each run (Resetter). Through the Switch view it reads the
// switch's role, queues and links, pins a packet's path at the source ToR,
// sends control packets that take bandwidth, and holds packets in reorder
// queues at the destination ToR. Packet headers (Header) travel with the
// packet, inside it, without allocation.
//
// Each scheme lives in its own package below this one and imports only
// this package; package schemes builds the registry from them. This
// package imports nothing of labctl but a helper for its messages: the
// engine (package fabric) imports it, never the reverse.
//
// Imports within labctl: only internal/registry, internal/suggest.
package lb
