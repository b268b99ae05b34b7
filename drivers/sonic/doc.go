// Package sonic is the SONiC switch QoS driver: labctl's QoS model
// (drivers/switchqos) as CONFIG_DB tables (PORT_QOS_MAP, DSCP_TO_TC_MAP,
// TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP, MAP_PFC_PRIORITY_TO_QUEUE,
// BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG, WRED_PROFILE, SCHEDULER,
// QUEUE, PFC_WD), read with `sonic-cfggen -d --print-data` and changed
// over SSH with the generic config updater: `config checkpoint`, `config
// apply-patch` (an RFC 6902 JSON patch), `config rollback`, `config
// save`; and it clears queue watermarks before each point (`sonic-clear
// queue watermark all`, watermark.go). It also holds the JSON patch the emulated SONiC switch applies,
// so both sides read one format.
//
// It talks to switches only through drivers/ssh, with simple commands
// whose every word is checked and quoted.
//
// Imports within labctl: only drivers/ssh, drivers/switchqos.
package sonic
