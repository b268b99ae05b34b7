// Package perftest is labctl's traffic: command lines for the perftest tools
// (ib_write_bw, ib_read_bw, ib_send_bw), the parser and formatter of their
// output (one place for the format: the emulator prints through it), the
// traffic patterns that compile to a Schedule (one file each: incast, ring
// all-reduce, workload from a flow-size CDF with Poisson arrivals,
// permutation, burst over background), the load a schedule offers and
// achieves, and the flow records agents report.
//
// Must not import: emulator, drivers, collectors, scenarios.
package perftest
