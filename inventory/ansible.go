package inventory

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ansibleGroup names the Ansible group of a switch role ("" for a role
// validation rejects); every one is a child of the group "switches". Hosts
// are in "rdma_hosts".
func ansibleGroup(role string) string {
	switch role {
	case "leaf":
		return "leaves"
	case "agg":
		return "aggs"
	case "spine":
		return "spines"
	}
	return ""
}

// WriteAnsible writes the lab as an Ansible YAML inventory: the group
// rdma_hosts, one group per switch role (ansibleGroup) under
// "switches", and per device the connection variables taken from the
// lab's endpoints and credential references (a password stays a lookup of
// its environment variable or file, never a value), with the lab's
// known_hosts enforced. ansible/playbooks use it; ansible/README.md says
// how.
func WriteAnsible(w io.Writer, l *Lab) error {
	inv, err := Ansible(l)
	if err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(inv); err != nil {
		return err
	}
	return enc.Close()
}

// Ansible is the lab's Ansible inventory as WriteAnsible writes it, as a
// value to encode otherwise (JSON, which Ansible reads as well).
func Ansible(l *Lab) (map[string]any, error) {
	vars := func(name, ssh string) (map[string]any, error) {
		v := map[string]any{}
		if ssh != "" {
			h, p, err := net.SplitHostPort(ssh)
			if err != nil {
				return nil, fmt.Errorf("ansible: device %s: mgmt.ssh %q: %w", name, ssh, err)
			}
			port, err := strconv.Atoi(p)
			if err != nil {
				return nil, fmt.Errorf("ansible: device %s: mgmt.ssh %q: port: %w", name, ssh, err)
			}
			v["ansible_host"], v["ansible_port"] = h, port
		}
		if c, ok := l.CredentialFor(name); ok {
			v["ansible_user"] = c.User
			if c.KeyFile != "" {
				v["ansible_ssh_private_key_file"] = c.KeyFile
			}
			// Ansible's ssh connection needs sshpass for a password.
			if c.PasswordEnv != "" {
				v["ansible_password"] = fmt.Sprintf("{{ lookup('env', '%s') }}", c.PasswordEnv)
			}
			if c.PasswordFile != "" {
				v["ansible_password"] = fmt.Sprintf("{{ lookup('file', '%s') }}", c.PasswordFile)
			}
		}
		return v, nil
	}
	hosts := map[string]any{}
	for _, h := range l.Hosts {
		v, err := vars(h.Name, h.Mgmt.SSH)
		if err != nil {
			return nil, err
		}
		rnics := []map[string]any{}
		for _, r := range h.RNICs {
			rnics = append(rnics, map[string]any{"device": r.Device, "netdev": r.Netdev, "ip": r.IP, "gid_index": r.GIDIndex, "speed_gbps": r.SpeedGbps})
		}
		v["rnics"] = rnics
		hosts[h.Name] = v
	}
	roles := map[string]any{}
	for _, r := range []string{"leaf", "agg", "spine"} {
		roles[ansibleGroup(r)] = map[string]any{"hosts": map[string]any{}}
	}
	for _, s := range l.Switches {
		g := ansibleGroup(s.Role)
		if g == "" {
			return nil, fmt.Errorf("ansible: switch %s: role %q has no Ansible group", s.Name, s.Role)
		}
		v, err := vars(s.Name, s.Mgmt.SSH)
		if err != nil {
			return nil, err
		}
		v["role"] = s.Role
		if s.Model != "" {
			v["model"] = s.Model
		}
		if s.QoSDriver != "" {
			v["qos_driver"] = s.QoSDriver
		}
		roles[g].(map[string]any)["hosts"].(map[string]any)[s.Name] = v
	}
	all := map[string]any{"children": map[string]any{
		"rdma_hosts": map[string]any{"hosts": hosts},
		"switches":   map[string]any{"children": roles},
	}}
	allVars := map[string]any{"labctl_lab": l.Name, "labctl_emulated": l.Emulated}
	if l.KnownHosts != "" {
		// Quoted for the shell-like split Ansible applies to these args.
		allVars["ansible_ssh_common_args"] = "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=" + shellQuote(l.KnownHosts)
	}
	all["vars"] = allVars
	return map[string]any{"all": all}, nil
}

// shellQuote quotes s for a POSIX shell unless it needs none.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=@~,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
