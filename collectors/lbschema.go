package collectors

import pb "github.com/openconfig/gnmi/proto/gnmi"

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

// lbCounter reads a notification prefix of the scheme counters
// (…/labctl-lb/{counters,host-counters}/counter[name=N]/state, or
// …/labctl-lb/ports/port[name=P]/counter[name=N]/state) into the point's
// tags; false if elems is not one.
func lbCounter(elems []*pb.PathElem, tags map[string]string) (meas string, rename map[string]string, ok bool) {
	if len(elems) < 4 || elems[0].GetName() != LBRoot {
		return "", nil, false
	}
	scope, port := LBScopeSwitch, ""
	switch elems[1].GetName() {
	case LBSwitchElem:
	case LBHostsElem:
		scope = LBScopeHosts
	case LBPortsElem:
		if len(elems) != 5 || elems[2].GetName() != LBPortElem || elems[2].GetKey()[LBKeyName] == "" {
			return "", nil, false
		}
		scope, port, elems = LBScopePort, elems[2].GetKey()[LBKeyName], elems[1:]
	default:
		return "", nil, false
	}
	if len(elems) != 4 || elems[2].GetName() != LBCounterElem || elems[3].GetName() != LBStateElem {
		return "", nil, false
	}
	name := elems[2].GetKey()[LBKeyName]
	if name == "" {
		return "", nil, false
	}
	tags[LBTagName], tags[LBTagScope] = name, scope
	if port != "" {
		tags[LBTagPort] = port
	}
	return LBMeasurement, map[string]string{LBValueLeaf: LBFieldValue}, true
}
