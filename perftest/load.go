package perftest

import "time"

// Load is what a point's flows offer to its hosts' links: the bytes of the
// flows that start within the arrival window [0, window), over hosts x
// link rate x window. Flows started after the window (a late agent) do not
// count, so a host that cannot keep up shows as a lower load.
func Load(bytes float64, hosts int, linkGbps float64, window time.Duration) float64 {
	if hosts <= 0 || linkGbps <= 0 || window <= 0 {
		return 0
	}
	return bytes * 8 / (float64(hosts) * linkGbps * float64(window.Nanoseconds()))
}

// OfferedLoad is the load a schedule's flows offer by their offsets.
func OfferedLoad(flows []Flow, hosts int, linkGbps float64, window time.Duration) float64 {
	var b float64
	for _, f := range flows {
		if f.Offset >= 0 && f.Offset < window {
			b += float64(f.Bytes)
		}
	}
	return Load(b, hosts, linkGbps, window)
}

// AchievedLoad is the load the flows really offered: completed flows by
// the time they started, counted from epoch (the time offsets count from).
func AchievedLoad(recs []FlowRecord, epoch time.Time, hosts int, linkGbps float64, window time.Duration) float64 {
	var b float64
	for _, r := range recs {
		if InWindow(r, epoch, window) {
			b += float64(r.Bytes)
		}
	}
	return Load(b, hosts, linkGbps, window)
}

// InWindow says whether a record's bytes count towards the achieved load:
// the flow completed and started within [epoch, epoch+window).
func InWindow(r FlowRecord, epoch time.Time, window time.Duration) bool {
	e := epoch.UnixNano()
	return r.Status == StatusOK && r.StartNs >= e && r.StartNs < e+window.Nanoseconds()
}
