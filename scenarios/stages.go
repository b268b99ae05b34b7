package scenarios

import (
	"fmt"
	"strings"
)

// The run's pipeline stages, as progress shows them and the manifest
// records them (its stage, and each entry of its stages). A manifest's
// stage may name the variant or point after a colon: "traffic:incast-0".
const (
	StageReserve   = "reserve"
	StageLab       = "lab"
	StagePlan      = "plan"
	StageProvision = "provision"
	StageCollect   = "collect"
	StageAgent     = "agent"
	StageCounters  = "counters"
	StageSchedules = "schedules"
	StageTraffic   = "traffic"
	StageGather    = "gather"
	StageTelemetry = "telemetry"
	StageSlurm     = "slurm"
	StageRelease   = "release"
	StageAnalyse   = "analyse"
	StageDone      = "done"
)

// StageInfo is one stage and what happens in it.
type StageInfo struct {
	Name  string
	About string
}

// Stages lists every stage in the order a run meets them (a run skips
// the ones it has no use for).
func Stages() []StageInfo {
	return []StageInfo{
		{StageReserve, "wait for, then hold, the lab's reservation (labctl reserve) for the run"},
		{StageLab, "open the lab: start an emulated one, or connect to a running or hardware lab"},
		{StagePlan, "expand the scenario's traffic into points and flows on the lab's hosts"},
		{StageProvision, "push the switch image, apply the switch and RNIC profiles, read them back"},
		{StageCollect, "start the switches' gNMI telemetry into the archive (and InfluxDB)"},
		{StageAgent, "check each host's labctl agent and upload it where it is missing or stale"},
		{StageCounters, "read the hosts' RNIC counters before and after the traffic"},
		{StageSchedules, "send each host its part of the point's flow schedule"},
		{StageTraffic, "run the point's flows (perftest through the agents, or the fabric twin)"},
		{StageGather, "fetch the agents' results; at the end, stop the collectors and gather Slurm points"},
		{StageTelemetry, "wait until every switch's samples have reached the traffic's end"},
		{StageSlurm, "follow the Slurm job array of an --executor slurm run"},
		{StageRelease, "stop a lab the run started, and drop the reservation (during the analysis, which needs no lab)"},
		{StageAnalyse, "compute the summary and write the reports"},
		{StageDone, "the run has ended (its outcome says how)"},
	}
}

// IsStage reports whether a manifest's stage is one of Stages, with or
// without a ":variant" or ":point" after it.
func IsStage(s string) bool {
	name, _, _ := strings.Cut(s, ":")
	for _, st := range Stages() {
		if st.Name == name {
			return true
		}
	}
	return false
}

// StageHelp is the stages as help text: one indented line each.
func StageHelp() string {
	var b strings.Builder
	for _, s := range Stages() {
		fmt.Fprintf(&b, "   %-10s %s\n", s.Name, s.About)
	}
	return b.String()
}
