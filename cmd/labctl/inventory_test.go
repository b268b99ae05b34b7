package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

// TestInventoryAnsibleRunningLab: for a lab started with 'lab up', the
// inventory names every device's SSH endpoint of the running lab (by the
// lab's name and by the lab file it exported), its user and key file and
// the lab's known_hosts; and Ansible itself logs in to every device with
// it and gets each one's own hostname back.
func TestInventoryAnsibleRunningLab(t *testing.T) {
	const name = "leafspine:1x1:2@100"
	home := upLab(t, name)
	st, ok, err := emulator.LoadState(home, name)
	if err != nil || !ok {
		t.Fatalf("state of %s: %v %v", name, ok, err)
	}
	lab, err := inventory.Load(st.LabFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{name, st.LabFile} {
		out, stderr, err := labctl(t, home, "inventory", "ansible", arg)
		if err != nil {
			t.Fatalf("inventory ansible %s: %v\n%s", arg, err, stderr)
		}
		var inv struct {
			All struct {
				Vars     map[string]any
				Children map[string]struct {
					Hosts    map[string]map[string]any
					Children map[string]struct{ Hosts map[string]map[string]any }
				}
			}
		}
		if err := yaml.Unmarshal([]byte(out), &inv); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		devices := map[string]map[string]any{}
		for h, v := range inv.All.Children["rdma_hosts"].Hosts {
			devices[h] = v
		}
		for _, g := range inv.All.Children["switches"].Children {
			for h, v := range g.Hosts {
				devices[h] = v
			}
		}
		want := map[string]string{}
		for _, s := range lab.Switches {
			want[s.Name] = s.Mgmt.SSH
		}
		for _, h := range lab.Hosts {
			want[h.Name] = h.Mgmt.SSH
		}
		if len(devices) != len(want) {
			t.Errorf("%s: %d devices in the inventory, the lab has %d", arg, len(devices), len(want))
		}
		for d, addr := range want {
			v := devices[d]
			got := net.JoinHostPort(str(v["ansible_host"]), str(v["ansible_port"]))
			if got != addr || v["ansible_user"] != "labctl" || v["ansible_ssh_private_key_file"] == nil {
				t.Errorf("%s: device %s: %v, want ssh %s", arg, d, v, addr)
			}
		}
		if args := str(inv.All.Vars["ansible_ssh_common_args"]); !strings.Contains(args, "UserKnownHostsFile="+lab.KnownHosts) {
			t.Errorf("%s: ssh args %q do not name the lab's known_hosts", arg, args)
		}
	}

	ansible, err := exec.LookPath("ansible")
	if err != nil {
		t.Skip("ansible not installed (Debian ansible; scripts/test.sh installs it): inventory not tried with Ansible")
	}
	out, _, err := labctl(t, home, "inventory", "ansible", name)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	invFile, cfg := filepath.Join(state, "hosts.yml"), filepath.Join(state, "ansible.cfg")
	if err := os.WriteFile(invFile, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// raw: the emulated devices run no Python (ansible/README.md)
	cmd := exec.CommandContext(ctx, ansible, "all", "-i", invFile, "-o", "-m", "raw", "-a", "hostname")
	cmd.Env = append(os.Environ(), "ANSIBLE_CONFIG="+cfg, "ANSIBLE_NOCOLOR=1", "ANSIBLE_HOST_KEY_CHECKING=True",
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(state, "tmp"), "ANSIBLE_SSH_CONTROL_PATH_DIR="+filepath.Join(state, "cp"))
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible all -m raw -a hostname: %v\n%s", err, b)
	}
	for d := range map[string]bool{"spine1": true, "leaf1": true, "h1": true, "h2": true} {
		if !regexp.MustCompile(`(?m)^` + d + ` \| CHANGED \| rc=0 \| \(stdout\) ` + d + `\\n`).Match(b) {
			t.Errorf("%s did not answer its own hostname:\n%s", d, b)
		}
	}
}

// An emulated lab that is not up has no endpoints: the command says so
// (exit 2) rather than print an inventory Ansible cannot use.
func TestInventoryAnsibleRefusesALabThatIsNotUp(t *testing.T) {
	t.Parallel()
	_, stderr, err := labctl(t, t.TempDir(), "inventory", "ansible", "leafspine:1x1:1@100")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr, "lab leafspine:1x1:1@100 is not up: start it with 'labctl lab up leafspine:1x1:1@100'") {
		t.Errorf("err %v, stderr %q", err, stderr)
	}
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	}
	return ""
}
