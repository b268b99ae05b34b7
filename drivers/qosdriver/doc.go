// Package qosdriver is the registry of switch QoS drivers: which drivers
// exist (netconf, sde, sonic, openconfig), which switch OS and model
// names pick each, and the error that answers an unknown name with the
// known ones and the nearest. The inventory validates a lab against it,
// provision opens a switch's driver by the name it picks, and the
// emulator serves each switch the surface its driver speaks: one answer
// to "which driver configures this switch".
//
// It knows names only; the drivers themselves are elsewhere (drivers/
// netconf, drivers/tofino, drivers/sonic, drivers/openconfig).
//
// Imports within labctl: only internal/registry.
package qosdriver
