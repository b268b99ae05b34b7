package lb

// Count is one counter of a scheme module (switch or host): a name from
// the vocabulary below and its value since the module's run started.
type Count struct {
	Name  string
	Value uint64
}

// Counting is a module (switch or host, package hostlb) that counts what
// its scheme does. Counts appends the module's counters to dst and
// returns it; the engine calls it only when it samples (telemetry, the
// end of a run), never per packet, so a module keeps its counters as
// plain fields it increments and Counts only reads them. The counters
// restart at 0 when the module's run starts (Resetter); the engine
// carries them over runs, so published values only grow.
type Counting interface {
	Counts(dst []Count) []Count
}

// The counter names: one vocabulary for every scheme, so that a report
// compares schemes by name. A module reports the names that mean
// something for it, and only those (absent is not zero).
const (
	CountFlowlets      = "flowlets"          // data flowlets started at a source ToR (a flow's first counts)
	CountReroutes      = "reroutes"          // a flow (or flowlet, or packet) moved off its path, for any reason
	CountFlowletMoves  = "flowlet_moves"     // of the reroutes, those at a flowlet gap (a scheme's flowlet fallback)
	CountDecisions     = "decisions"         // per-packet path choices made (per-packet schemes)
	CountElephants     = "elephants"         // flows marked elephant
	CountCNMSent       = "cnm_sent"          // congestion notification messages made (FLB)
	CountCNMRelayed    = "cnm_relayed"       // CNMs relayed hop by hop toward their source
	CountIsolations    = "isolations"        // flows put on an isolation path
	CountNotifications = "notifications"     // control notifications sent (to a switch or a host)
	CountReordered     = "reordered"         // packets held in a reorder queue at the destination ToR
	CountReorderFails  = "reorder_fallbacks" // reroutes that found no reorder queue: sent on unordered
	CountGapsStretched = "gaps_stretched"    // host: inter-packet gaps held up to the flowlet timeout (boundaries made)
	CountGapsNatural   = "gaps_natural"      // host: gaps already at or above the flowlet timeout
	CountCNMReceived   = "cnm_received"      // host: CNMs taken
	CountPauses        = "pauses"            // host: QPs paused
	CountResumes       = "resumes"           // host: QPs resumed
)

// LinkCount is one counter of a module for one directed link (an
// Egress.Link): published at the port the link leaves.
type LinkCount struct {
	Link int32
	Count
}

// LinkCounting is a module that also counts per link (Reunion: the
// elephants each link carried). As Counting: read only when the engine
// samples; the counts restart with the module's run, and a link the
// module reported once it keeps reporting (0 after a restart), so that
// the engine sees the restart.
type LinkCounting interface {
	LinkCounts(dst []LinkCount) []LinkCount
}

// The per-link counter names.
const (
	// CountElephantsMax is the most distinct elephants the link carried
	// in one interval of the scheme's (Reunion: s) since the run began.
	// It only grows within a run, so its increase over a run is the
	// run's maximum.
	CountElephantsMax = "elephants_max"
	// CountElephantIntervals sums, over the intervals, the distinct
	// elephants the link carried in each (elephant-intervals).
	CountElephantIntervals = "elephant_intervals"
)
