package ssh_test

import (
	"strings"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/inventory"
)

func TestTargetsFromTheLab(t *testing.T) {
	cred := inventory.Credential{User: "lab", Agent: true}
	lab := &inventory.Lab{Name: "l", Credentials: map[string]inventory.Credential{"default": cred},
		Switches: []inventory.Switch{
			{Name: "sw1", Mgmt: inventory.Mgmt{SSH: "10.0.0.1:22", NETCONF: "10.0.0.1:830"}},
			{Name: "sw2", Mgmt: inventory.Mgmt{SSH: "10.0.0.2:22"}},
		},
		Hosts: []inventory.Host{{Name: "h1", Mgmt: inventory.Mgmt{SSH: "10.0.1.1:22"}}}}

	ts, err := sshdrv.SwitchTargets(lab, nil, sshdrv.EndpointSSH)
	if err != nil || len(ts) != 2 || ts[1] != (sshdrv.Target{Name: "sw2", Addr: "10.0.0.2:22", Cred: cred}) {
		t.Fatalf("switches: %v %+v", err, ts)
	}
	if ts, err := sshdrv.SwitchTargets(lab, []string{"sw1"}, sshdrv.EndpointNETCONF); err != nil || len(ts) != 1 || ts[0].Addr != "10.0.0.1:830" {
		t.Fatalf("one switch over NETCONF: %v %+v", err, ts)
	}
	for _, tc := range []struct {
		do   func() error
		want string
	}{
		{func() error { _, err := sshdrv.SwitchTargets(lab, nil, sshdrv.EndpointNETCONF); return err }, "device sw2 has no netconf endpoint in lab l"},
		{func() error { _, err := sshdrv.SwitchTargets(lab, []string{"sw9"}, sshdrv.EndpointSSH); return err }, "lab l has no switch sw9"},
		{func() error { _, err := sshdrv.DeviceTarget(lab, "h9", sshdrv.EndpointSSH); return err }, "lab l has no device h9"},
		{func() error {
			lab.Hosts[0].Credential = "missing"
			_, err := sshdrv.HostTargets(lab)
			return err
		}, "device h1 has no credential in lab l"},
	} {
		if err := tc.do(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
