// Package perftest is labctl's traffic: command lines for the perftest tools
// (ib_write_bw, ib_read_bw, ib_send_bw), the parser and formatter of their
// output (one place for the format: the emulator prints through it), traffic
// patterns (incast, ring all-reduce) that compile to a Schedule, and the flow
// records agents report.
//
// It must not import the emulator, drivers, collectors or scenarios.
package perftest
