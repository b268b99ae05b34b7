package fabric

import "testing"

// TestDSCPClassification: a switch with a DSCP map puts a flow's packets
// in the class its ToS maps to. A 64:1 incast whose DSCP maps to the
// lossless class is lossless with PAUSE frames; the same incast on a DSCP
// the map does not name lands in class 0, which drops and never pauses;
// a ToS without ECT is never marked; flows of unknown ToS keep their
// priority. A NIC that sends the class on priority 0 (trust pcp) while the
// switch classifies it lossless ignores the PAUSE frames for priority 3:
// the switch's buffer overflows.
func TestDSCPClassification(t *testing.T) {
	type outcome struct{ drops, pfc, marks, q0, q3, q6 uint64 }
	tc26 := uint8(3)
	incastOn := func(tos, nicPrio int, dscpMap bool) outcome {
		e := pengine(t, 65, func(c *Config) {
			c.DCQCN.Enabled, c.BufferBytes = false, 4<<20
			c.ECNPrios = 1 << 3 // the RoCE queue alone marks
		})
		if err := e.ConfigureSwitch("sw", func(c *SwitchConfig) {
			c.DSCPMap = dscpMap
			c.DSCPToTC[26] = tc26
		}); err != nil {
			t.Fatal(err)
		}
		flows := incast(64, 256<<10)
		for i := range flows {
			flows[i].TOS, flows[i].Priority = tos, nicPrio
		}
		run(t, e, flows)
		var o outcome
		for k, p := range e.Counters().Ports {
			o.drops += p.Drops
			if k.Device == "sw" {
				o.pfc += p.PFCTx[3] + p.PFCTx[0]
				o.marks += p.ECNMarked
				o.q0 += p.Queues[0].TxPkts
				o.q3 += p.Queues[3].TxPkts
				o.q6 += p.Queues[6].TxPkts
			}
		}
		return o
	}
	incastWith := func(tos int, dscpMap bool) outcome { return incastOn(tos, 3, dscpMap) }
	mapped := incastWith(106, true) // DSCP 26, ECT(0)
	t.Logf("DSCP 26: %+v", mapped)
	if mapped.drops != 0 || mapped.pfc == 0 || mapped.marks == 0 || mapped.q0 != 0 || mapped.q3 == 0 {
		t.Errorf("DSCP 26, mapped to the lossless class 3: %+v; want no drops, PAUSE, ECN marks, all in queue 3", mapped)
	}
	unmapped := incastWith(98, true) // DSCP 24, ECT(0): no map entry
	t.Logf("DSCP 24: %+v", unmapped)
	if unmapped.drops == 0 || unmapped.pfc != 0 || unmapped.marks != 0 || unmapped.q3 != 0 || unmapped.q0 == 0 {
		t.Errorf("DSCP 24, unmapped (class 0, lossy, no ECN): %+v; want drops, no PAUSE, no marks, all in queue 0", unmapped)
	}
	notECT := incastWith(104, true) // DSCP 26, Not-ECT
	if notECT.drops != 0 || notECT.pfc == 0 || notECT.marks != 0 {
		t.Errorf("DSCP 26 without ECT: %+v; want lossless and never marked", notECT)
	}
	if unknown := incastWith(0, true); unknown != mapped {
		t.Errorf("a flow of unknown ToS keeps its priority (3): %+v, want as DSCP 26: %+v", unknown, mapped)
	}
	if noMap := incastWith(98, false); noMap != mapped {
		t.Errorf("a switch without a DSCP map keeps the priority: %+v, want %+v", noMap, mapped)
	}
	if nic0 := incastOn(106, 0, true); nic0.drops == 0 || nic0.pfc == 0 || nic0.q3 == 0 {
		t.Errorf("NIC on priority 0, switch class 3: %+v; want PAUSE frames sent, ignored, and drops", nic0)
	}
	tc26 = 7 // the engine's control queue: data goes to 6 instead
	if o := incastWith(106, true); o.q6 == 0 || o.q3 != 0 {
		t.Errorf("DSCP 26 mapped to class 7: %+v; want the data in queue 6", o)
	}
}
