// Package hostlb is the interface between the fabric twin's RNIC model
// and its host-side load-balancing modules, and the registry that names
// them: what a sending host's NIC or driver may do to the packets of its
// QPs (a flow each) on top of whatever the switches run.
//
// A module (Module) sees each data packet of its host's QPs just before it
// leaves the NIC and may hold it a while (stretching the gap before it) or
// change its UDP source port (which moves it, and the QP's later packets,
// onto another ECMP path). Through the Host view it pauses and resumes a
// QP and sets its rate; optional interfaces give it the notifications that
// switch modules send to the host (Notified, lb.Switch.Notify), its own
// timers (Ticker) and the start of each run (Resetter).
//
// Each module lives in its own package below this one and imports only
// this package and emulator/fabric/lb; package hostschemes builds the
// registry from them. The engine (package fabric) imports this package,
// never the reverse.
//
// Imports within labctl: only emulator/fabric/lb.
package hostlb
