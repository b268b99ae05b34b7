package fabric

import "testing"

// TestPerHostDCQCN: DCQCN settings belong to each host's NIC. In a 4:1
// incast, senders whose reaction point is off count the CNPs they get as
// ignored and never slow down, while the one sender left on handles them;
// a receiver whose notification point is off sends no CNPs at all.
func TestPerHostDCQCN(t *testing.T) {
	e := pengine(t, 5, nil)
	for _, h := range []string{"h2", "h3", "h4"} {
		if err := e.ConfigureHost(h, func(d *DCQCN) { d.RPOff = 1 << 3 }); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ConfigureHost("h9", func(*DCQCN) {}); err == nil {
		t.Error("ConfigureHost of a host the fabric does not have must fail")
	}
	res := run(t, e, incast(4, 4*mib))
	c := e.Counters()
	for _, h := range []string{"h2", "h3", "h4"} {
		p := c.Ports[PortKey{h, "mlx5_0"}]
		if p.CNPIgnored == 0 || p.CNPHandled != 0 {
			t.Errorf("%s (reaction point off): %d CNPs ignored, %d handled; want some ignored, none handled", h, p.CNPIgnored, p.CNPHandled)
		}
	}
	if p := c.Ports[PortKey{"h5", "mlx5_0"}]; p.CNPHandled == 0 || p.CNPIgnored != 0 {
		t.Errorf("h5 (DCQCN on): %d CNPs handled, %d ignored", p.CNPHandled, p.CNPIgnored)
	}
	// The sender that reacts backs off and finishes last.
	fct := map[string]int64{}
	for i, r := range res {
		fct[incast(4, 0)[i].Src] = r.End - r.Start
	}
	for _, h := range []string{"h2", "h3", "h4"} {
		if fct[h] >= fct["h5"] {
			t.Errorf("FCTs %v: the senders that ignore CNPs should finish before the one that slows down", fct)
		}
	}
	if d, _ := e.HostDCQCN("h5"); d.RPOff != 0 || !d.Enabled {
		t.Errorf("h5's settings changed: %+v", d)
	}

	e = pengine(t, 5, nil)
	if err := e.ConfigureHost("h1", func(d *DCQCN) { d.NPOff = 1 << 3 }); err != nil {
		t.Fatal(err)
	}
	run(t, e, incast(4, 4*mib))
	var sent, marked uint64
	for _, p := range e.Counters().Ports {
		sent += p.CNPSent
		marked += p.ECNReceived[3]
	}
	if sent != 0 || marked == 0 {
		t.Errorf("receiver with its notification point off: %d CNPs sent for %d marked packets; want none for some", sent, marked)
	}
}
