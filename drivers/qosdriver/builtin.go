package qosdriver

// The drivers labctl has, as the inventory names them.
const (
	NETCONF    = "netconf"    // labctl's urn:labctl:qos model over NETCONF; the default
	SDE        = "sde"        // the Tofino SDE shell (bfshell/bfrt_python)
	SONiC      = "sonic"      // SONiC CONFIG_DB through the generic config updater
	OpenConfig = "openconfig" // openconfig-qos over gNMI Set/Get
)

// Builtin is a registry of labctl's drivers. It is built per call (no
// package state): callers that look up many switches keep one.
func Builtin() *Registry {
	r := New(NETCONF)
	for _, d := range []Driver{
		{Name: NETCONF, Models: []string{"emulated-tofino"},
			About: "labctl's own QoS model (urn:labctl:qos) over NETCONF: candidate, validate, confirmed commit"},
		{Name: SDE, OS: []string{"bf-sde"},
			About: "Tofino traffic manager tables through the SDE shell over SSH: snapshot, write, read back, restore"},
		{Name: SONiC, OS: []string{"sonic"},
			About: "SONiC CONFIG_DB over SSH: config checkpoint, config apply-patch (JSON patch), read back with sonic-cfggen, config rollback"},
		{Name: OpenConfig, OS: []string{"enterprise-sonic", "eos", "openconfig"}, // drivers/openconfig's Deviations
			About: "openconfig-qos over gNMI: Get, one Set (all or nothing), read back, a Set of the old leaves to roll back; per-OS deviations"},
	} {
		if err := r.Register(d); err != nil {
			panic(err) // a programming error in the list above; the test builds it
		}
	}
	return r
}
