package collectors

import (
	"fmt"
	"strconv"
	"strings"
)

// The telemetry schema: every measurement, tag and field name labctl
// writes or reads is spelled here and nowhere else. Writers (the gNMI
// collector, the scenarios' RNIC readers, the emulated gNMI target) and
// readers (reports, the Grafana dashboard test) use these names;
// docs/telemetry.md lists them.

// Measurements.
const (
	MeasPort    = "port"          // switch port counters
	MeasQueue   = "queue"         // switch egress queue counters and occupancy
	MeasRNIC    = "rnic"          // RNIC RDMA hw_counters (sysfs), per RDMA device
	MeasEthtool = "rnic_ethtool"  // RNIC `ethtool -S` pause and ECN counters, per netdev
	MeasGap     = "collector_gap" // a span of a device's telemetry that is missing (gap.go)
)

// Tags. Every point carries TagLab and TagRun; switch points TagDevice
// (the switch), RNIC points TagHost and TagDevice (the RDMA device).
const (
	TagLab    = "lab"
	TagRun    = "run"
	TagDevice = "device"
	TagPort   = "port"
	TagQueue  = "queue"
	TagHost   = "host"
	TagNetdev = "netdev" // the RNIC's network interface (rnic_ethtool)
	TagTarget = "target" // the gNMI target of a gap (switch name or COUNTERS_DB)
	// TagPoint tags the samples of a point an executor ran on a lab of
	// its own (docs/slurm.md): such points may run at once, on devices of
	// the same names. The archive gatherer adds it.
	TagPoint = "point"
)

// Fields of port and queue.
const (
	FieldRxBytes    = "rx_bytes"
	FieldTxBytes    = "tx_bytes"
	FieldRxPkts     = "rx_pkts"
	FieldTxPkts     = "tx_pkts"
	FieldDrops      = "drops"
	FieldECNMarked  = "ecn_marked"
	FieldDepthBytes = "depth_bytes" // queue: current occupancy
	FieldWatermark  = "watermark"   // queue: peak occupancy since the last clear, bytes
)

// Per-priority field patterns (fmt verbs, priority 0..7): PrioName makes
// a name, PrioOf reads one.
const (
	FieldPFCTx      = "pfc%d_tx"                   // port: PFC frames sent
	FieldPFCRx      = "pfc%d_rx"                   // port: PFC frames received
	FieldPFCPauseUs = "pfc%d_rx_pause_duration_us" // port: time paused by received PFC, µs
	// RNIC `ethtool -S` names (mlx5), kept verbatim as field names.
	FieldRNICPauseRx   = "rx_prio%d_pause"
	FieldRNICPauseTx   = "tx_prio%d_pause"
	FieldRNICPauseRxUs = "rx_prio%d_pause_duration" // µs (UNCERTAIN per NVIDIA's counter docs)
	FieldRNICPauseTxUs = "tx_prio%d_pause_duration"
	FieldRNICMarked    = "rx_prio%d_marked" // ECN-marked packets received
)

// Priorities is how many PFC priorities a per-priority field has.
const Priorities = 8

// RNIC hw_counters the report reads by name (the others it sums as they come).
const (
	FieldOutOfSequence = "out_of_sequence"
	FieldCNPSent       = "np_cnp_sent"
	FieldCNPHandled    = "rp_cnp_handled"
	FieldECNMarkedRoCE = "np_ecn_marked_roce_packets"
)

// EthtoolCounters are the `ethtool -S` counters the RNIC poller keeps
// (per-priority patterns and plain names); the rest of the tool's output
// (traffic per priority, vport and phy counters) is not telemetry.
func EthtoolCounters() []string {
	return []string{FieldRNICPauseRx, FieldRNICPauseTx, FieldRNICPauseRxUs, FieldRNICPauseTxUs, FieldRNICMarked,
		"rx_pause_ctrl_phy", "tx_pause_ctrl_phy"}
}

// KeepEthtool says whether an `ethtool -S` counter is one of EthtoolCounters.
func KeepEthtool(name string) bool {
	for _, c := range EthtoolCounters() {
		if c == name {
			return true
		}
		if _, ok := PrioOf(c, name); ok {
			return true
		}
	}
	return false
}

// PrioName is pattern's field for priority p.
func PrioName(pattern string, p int) string { return fmt.Sprintf(pattern, p) }

// PrioOf reads the priority of field f made from pattern ("pfc%d_tx",
// "pfc3_tx" → 3); false when f is not one of pattern's.
func PrioOf(pattern, f string) (int, bool) {
	pre, suf, ok := strings.Cut(pattern, "%d")
	if !ok {
		return 0, false
	}
	rest, ok := strings.CutPrefix(f, pre)
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, suf)
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	p, err := strconv.Atoi(digits)
	return p, err == nil
}

// Field describes one field of a measurement.
type Field struct {
	Name string // a name, or a per-priority pattern (PrioName)
	// Report: the run report shows it (reports/telemetry.go), so some
	// collector must produce it (the end-to-end schema test checks).
	Report bool
	Doc    string
}

// Names are the field's names: one, or one per priority.
func (f Field) Names() []string {
	if !strings.Contains(f.Name, "%d") {
		return []string{f.Name}
	}
	out := make([]string, Priorities)
	for p := range out {
		out[p] = PrioName(f.Name, p)
	}
	return out
}

// Measurement describes one measurement: its tags and fields, and who
// writes it.
type Measurement struct {
	Name   string
	Tags   []string
	Fields []Field
	Writer string
	// Always: every healthy run of the emulated lab writes it (a gap is
	// written only when something is missing).
	Always bool
}

// Has says whether name is a field of m (per-priority patterns expanded).
func (m Measurement) Has(name string) bool {
	for _, f := range m.Fields {
		if f.Name == name {
			return true
		}
		if _, ok := PrioOf(f.Name, name); ok {
			return true
		}
	}
	return false
}

// Schema is every measurement labctl writes. The rnic measurement holds
// whatever hw_counters a host has (their names are the kernel's); only
// those listed are read by name.
func Schema() []Measurement {
	sw := []string{TagLab, TagRun, TagDevice, TagPort, TagIdle, TagPoint}
	return []Measurement{
		{Name: MeasPort, Tags: sw, Writer: "gNMI collector (OpenConfig interface counters, COUNTERS_DB port table)", Always: true, Fields: []Field{
			{Name: FieldRxBytes}, {Name: FieldTxBytes}, {Name: FieldRxPkts}, {Name: FieldTxPkts, Report: true, Doc: "ECN mark rate denominator"},
			{Name: FieldDrops, Report: true},
			{Name: FieldPFCTx, Report: true}, {Name: FieldPFCRx, Report: true},
			{Name: FieldPFCPauseUs, Report: true, Doc: "Paused (µs) of the PFC-by-tier table"},
		}},
		{Name: MeasQueue, Tags: append(sw[:len(sw):len(sw)], TagQueue), Writer: "gNMI collector (OpenConfig queue state, COUNTERS_DB queue table)", Always: true, Fields: []Field{
			{Name: FieldTxPkts, Report: true}, {Name: FieldTxBytes}, {Name: FieldDrops},
			{Name: FieldECNMarked, Report: true}, {Name: FieldDepthBytes, Report: true}, {Name: FieldWatermark, Report: true},
		}},
		{Name: MeasRNIC, Tags: []string{TagLab, TagRun, TagHost, TagDevice, TagPoint}, Writer: "scenarios: hw_counters over SSH before, during and after the traffic", Always: true, Fields: []Field{
			{Name: FieldOutOfSequence, Report: true}, {Name: FieldCNPSent, Report: true},
			{Name: FieldCNPHandled, Report: true}, {Name: FieldECNMarkedRoCE, Report: true},
		}},
		{Name: MeasEthtool, Tags: []string{TagLab, TagRun, TagHost, TagDevice, TagNetdev, TagPoint}, Writer: "scenarios: ethtool -S over SSH before, during and after the traffic", Always: true, Fields: []Field{
			{Name: FieldRNICPauseTx, Report: true}, {Name: FieldRNICPauseRx, Report: true},
			{Name: FieldRNICPauseRxUs, Report: true}, {Name: FieldRNICPauseTxUs}, {Name: FieldRNICMarked},
			{Name: "rx_pause_ctrl_phy"}, {Name: "tx_pause_ctrl_phy"},
		}},
		{Name: LBMeasurement, Tags: []string{TagLab, TagRun, TagDevice, LBTagName, LBTagScope, LBTagPort, TagIdle, TagPoint},
			Writer: "gNMI collector (the emulated switches' /labctl-lb counters, lbschema.go); only schemes that count write it", Fields: []Field{
				{Name: LBFieldValue, Doc: "a counter of the twin's load-balancing or host module; grows over the lab's life"},
			}},
		{Name: MeasGap, Tags: []string{TagLab, TagRun, TagDevice, TagTarget, TagHost, TagPoint}, Writer: "gNMI collector, RNIC readers (gap.go)", Fields: []Field{
			{Name: GapReason}, {Name: GapPath}, {Name: GapSinceNs}, {Name: GapUntilNs}, {Name: GapDuplicates}, {Name: GapUnreadable}, {Name: GapUnreadableS},
			{Name: GapIntervalNs}, {Name: GapBrokeAtNs}, {Name: GapResumedAtNs},
		}},
	}
}

// MeasurementOf is the schema's measurement name, if it has one.
func MeasurementOf(name string) (Measurement, bool) {
	for _, m := range Schema() {
		if m.Name == name {
			return m, true
		}
	}
	return Measurement{}, false
}

// gNMI: what targets send, and the schema field each leaf becomes.

// CountersDB is the SONiC-style gNMI target for what OpenConfig does not
// model: PFC per priority (openconfig/public has no PFC model) and
// current queue occupancy.
const CountersDB = "COUNTERS_DB"

// SAI counter names of COUNTERS_DB (per-priority ones are patterns).
const (
	SAIPFCRxPkts      = "SAI_PORT_STAT_PFC_%d_RX_PKTS"
	SAIPFCTxPkts      = "SAI_PORT_STAT_PFC_%d_TX_PKTS"
	SAIPFCPauseUs     = "SAI_PORT_STAT_PFC_%d_RX_PAUSE_DURATION_US"
	SAIQueueOccupancy = "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES"
	SAIQueueWatermark = "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"
)

// GNMIMap is one gNMI path the collector decodes: the notification
// prefix (keys in brackets name the tag they fill), its measurement, and
// leaf → field.
type GNMIMap struct {
	Target, Prefix, Measurement string
	Leaves                      map[string]string
	Tags                        map[string]string // fixed tags of every point of the path
}

// gnmiMaps are the paths Decode understands, in the order it tries them.
// A COUNTERS_DB key holding a colon (Ethernet0:3) is a queue, otherwise a
// port.
func gnmiMaps() []GNMIMap {
	pfc := map[string]string{}
	for p := range Priorities {
		pfc[PrioName(SAIPFCRxPkts, p)] = PrioName(FieldPFCRx, p)
		pfc[PrioName(SAIPFCTxPkts, p)] = PrioName(FieldPFCTx, p)
		pfc[PrioName(SAIPFCPauseUs, p)] = PrioName(FieldPFCPauseUs, p)
	}
	return append([]GNMIMap{
		{Target: CountersDB, Prefix: "/COUNTERS/<port>:<queue>", Measurement: MeasQueue,
			Leaves: map[string]string{SAIQueueOccupancy: FieldDepthBytes, SAIQueueWatermark: FieldWatermark}},
		{Target: CountersDB, Prefix: "/COUNTERS/<port>", Measurement: MeasPort, Leaves: pfc},
		{Prefix: "/interfaces/interface[name=<port>]/state/counters", Measurement: MeasPort,
			Leaves: map[string]string{"in-octets": FieldRxBytes, "out-octets": FieldTxBytes, "in-pkts": FieldRxPkts, "out-pkts": FieldTxPkts, "out-discards": FieldDrops}},
		{Prefix: "/qos/interfaces/interface[interface-id=<port>]/output/queues/queue[name=<queue>]/state", Measurement: MeasQueue,
			Leaves: map[string]string{"transmit-pkts": FieldTxPkts, "transmit-octets": FieldTxBytes, "dropped-pkts": FieldDrops,
				"max-queue-len": FieldWatermark, "ecn-marked-pkts": FieldECNMarked}},
	}, lbMaps()...)
}

// GNMIMaps are the paths the collector decodes (for docs and tests).
func GNMIMaps() []GNMIMap { return gnmiMaps() }
