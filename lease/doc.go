// Package lease holds a lab's lease: the exclusive right to change a lab
// (run traffic on it, provision it, take it down), held by one command of
// one owner (user@host) at a time, with an expiry that the holder renews
// while it is alive. A lease whose expiry passed, or whose process is gone
// (its pid no longer runs, or runs a different process: the start time
// differs), can be taken over; the taker is told whose lease it took.
//
// The lease lives behind Store (Take, Renew, Release, Read) so that a
// server-side lock can replace the file store; FileStore keeps it in a
// file on a directory every controller host sees, taken under flock and
// written with write-then-rename so two takers never both win and a crash
// never leaves half a lease.
//
// Imports within labctl: none.
package lease
