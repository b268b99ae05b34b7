// Package flbrc is FLB's minimal rate control (FLB+RC, Hu et al.) as a
// host module: a flow starts at line rate (it sends its first BDP and on
// without ramping); on a congestion CNM that the FLB switches forward to
// the host (package lb/flb, lb.Switch.Notify) the flow pauses and its
// rate becomes C/n, n the largest congested-flow count its CNMs carried;
// on a release CNM it resumes at that rate. No iterative convergence; the
// paper gives no way back to line rate, and here a flow with no CNM for
// restore_us returns to it.
//
// It reads the CNM format of package lb/flb.
//
// Imports within labctl: only emulator/fabric/hostlb, emulator/fabric/lb.
package flbrc
