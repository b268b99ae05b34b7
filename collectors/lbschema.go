package collectors

// Scheme counters of the emulated lab's fabric twin: what the switches'
// load-balancing modules (and the modules of the hosts attached to them)
// count — flowlets, reroutes, elephants, CNMs, isolations, reordered
// packets ... (the names of emulator/fabric/lb's Count vocabulary). No
// vendor models these: the twin's gNMI targets serve them under a path of
// their own, LBRoot, which only an emulated switch has:
//
//	/labctl-lb/counters/counter[name=flowlets]/state/value       the switch's module
//	/labctl-lb/host-counters/counter[name=gaps_stretched]/state/value  its hosts' modules, summed
//	/labctl-lb/ports/port[name=Ethernet0]/counter[name=elephants_max]/state/value  per egress port toward a switch
//
// The collector writes each as a point of measurement LBMeasurement,
// tags device, LBTagName and LBTagScope (and LBTagPort for a port's),
// field LBFieldValue: a counter
// that only grows over the lab's life (the twin carries the modules'
// counts over runs), so a point's figure is the difference of two samples.
const (
	LBRoot        = "labctl-lb"
	LBSwitchElem  = "counters"      // the switch's module's counters
	LBHostsElem   = "host-counters" // the attached hosts' modules' counters, summed
	LBPortsElem   = "ports"         // per egress port (lb.LinkCounting: Reunion's elephants per path)
	LBPortElem    = "port"          // keyed by name
	LBCounterElem = "counter"       // keyed by name
	LBKeyName     = "name"
	LBStateElem   = "state"
	LBValueLeaf   = "value"
	LBMeasurement = "lb_counters"
	LBTagName     = "name"
	LBTagScope    = "scope" // LBScopeSwitch or LBScopeHosts
	LBScopeSwitch = "switch"
	LBScopeHosts  = "hosts"
	LBScopePort   = "port" // a port's counter: tag LBTagPort names it
	LBTagPort     = "port"
	// The per-port counters a report reads by name (emulator/fabric/lb's
	// CountElephantsMax and CountElephantIntervals).
	LBElephantsMax      = "elephants_max"
	LBElephantIntervals = "elephant_intervals"
	LBFieldValue        = "value"
	lbSubscription      = "/" + LBRoot
)

// LBPaths are the subscription paths of the scheme counters: only an
// emulated lab's switches serve them (a real switch may refuse a path it
// does not know), so a runner adds them to the defaults for those alone.
var LBPaths = []string{lbSubscription}

// lbMaps are the scheme counters' paths for the decoder (gnmiMaps): a
// switch's module's counters, its hosts' modules' (summed) and per-port
// counters, each scope a fixed tag.
func lbMaps() []GNMIMap {
	counter := "/" + LBCounterElem + "[" + LBKeyName + "=<" + LBTagName + ">]/" + LBStateElem
	leaves := map[string]string{LBValueLeaf: LBFieldValue}
	return []GNMIMap{
		{Prefix: lbSubscription + "/" + LBSwitchElem + counter, Measurement: LBMeasurement, Leaves: leaves,
			Tags: map[string]string{LBTagScope: LBScopeSwitch}},
		{Prefix: lbSubscription + "/" + LBHostsElem + counter, Measurement: LBMeasurement, Leaves: leaves,
			Tags: map[string]string{LBTagScope: LBScopeHosts}},
		{Prefix: lbSubscription + "/" + LBPortsElem + "/" + LBPortElem + "[" + LBKeyName + "=<" + LBTagPort + ">]" + counter,
			Measurement: LBMeasurement, Leaves: leaves, Tags: map[string]string{LBTagScope: LBScopePort}},
	}
}
