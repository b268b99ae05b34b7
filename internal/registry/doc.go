// Package registry is the one registry type behind labctl's named plug-ins
// (the twin's load-balancing and host modules and engines, the switch QoS
// drivers, the telemetry sinks), in containerlab's style: a registry is an
// object its owner builds (no package state), a name is registered once,
// and a lookup of an unknown name answers with the known names and the
// nearest one. What a name maps to is the owner's business.
//
// Imports within labctl: only internal/suggest.
package registry
