package reorder

import "github.com/labctl/labctl/emulator/fabric/lb"

// The fields of lb.Header a rerouting source ToR writes on every data
// packet and Dest reads:
//
//   - Words[EpochWord]: the flow's epoch (from 1; 0: not stamped, passed
//     through). An epoch is one round of "at most one reroute": it starts
//     afresh once the previous reroute has been cleared.
//   - FlagTail: the last packet on the epoch's old path.
//   - FlagRerouted: sent after the tail, on the new path (ConWeave's phase 1).
//   - TS: the packet's departure from the source ToR, ns.
//   - TS2: the tail's departure from the source ToR, ns (on the tail and
//     on every REROUTED packet).
//
// Words 0 to 2 stay free for the scheme.
const EpochWord = 3

// Stamp writes a data packet's reordering fields.
func Stamp(h *lb.Header, epoch int64, tail, rerouted bool, now, tailAt int64) {
	h.Words[EpochWord] = epoch
	h.Flags &^= lb.FlagTail | lb.FlagRerouted
	if tail {
		h.Flags |= lb.FlagTail
	}
	if rerouted {
		h.Flags |= lb.FlagRerouted
	}
	h.TS, h.TS2 = now, tailAt
}

// Epoch is a stamped packet's epoch (0: not stamped).
func Epoch(h *lb.Header) int64 { return h.Words[EpochWord] }
