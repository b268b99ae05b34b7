// Package openconfig is the OpenConfig QoS switch driver: labctl's QoS
// model (drivers/switchqos) as openconfig-qos leaves (classifier DSCP ->
// forwarding group, queues, scheduler policy, WRED/ECN queue management
// profiles, buffer allocation profiles) set with gNMI Set and read back
// with gNMI Get. OpenConfig has no PFC model: a NOS that exposes PFC
// does so in its own augment, and a per-OS deviations table
// (Deviations) says which parts of the model a NOS lacks, so that a plan
// neither asks for nor reports what the switch cannot hold.
//
// Imports within labctl: only drivers/switchqos.
package openconfig
