package inventory

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"gopkg.in/yaml.v3"
)

// WriteAnsible writes the lab as an Ansible YAML inventory: groups
// rdma_hosts, leaves and spines, with connection variables taken from the
// lab's endpoints and credential references (a password stays a lookup of
// its environment variable or file, never a value), and known_hosts
// enforced. ansible/playbooks use it.
func WriteAnsible(w io.Writer, l *Lab) error {
	group := func() map[string]any { return map[string]any{} }
	hosts, leaves, spines := group(), group(), group()
	vars := func(name, ssh string) (map[string]any, error) {
		v := map[string]any{}
		if ssh != "" {
			h, p, err := net.SplitHostPort(ssh)
			if err != nil {
				return nil, fmt.Errorf("ansible: device %s: %w", name, err)
			}
			port, _ := strconv.Atoi(p)
			v["ansible_host"], v["ansible_port"] = h, port
		}
		if c, ok := l.CredentialFor(name); ok {
			v["ansible_user"] = c.User
			if c.KeyFile != "" {
				v["ansible_ssh_private_key_file"] = c.KeyFile
			}
			if c.PasswordEnv != "" {
				v["ansible_password"] = fmt.Sprintf("{{ lookup('env', '%s') }}", c.PasswordEnv)
			}
			if c.PasswordFile != "" {
				v["ansible_password"] = fmt.Sprintf("{{ lookup('file', '%s') }}", c.PasswordFile)
			}
		}
		return v, nil
	}
	for _, h := range l.Hosts {
		v, err := vars(h.Name, h.Mgmt.SSH)
		if err != nil {
			return err
		}
		var rnics []map[string]any
		for _, r := range h.RNICs {
			rnics = append(rnics, map[string]any{"device": r.Device, "netdev": r.Netdev, "ip": r.IP, "gid_index": r.GIDIndex, "speed_gbps": r.SpeedGbps})
		}
		v["rnics"] = rnics
		hosts[h.Name] = v
	}
	for _, s := range l.Switches {
		v, err := vars(s.Name, s.Mgmt.SSH)
		if err != nil {
			return err
		}
		v["model"], v["qos_driver"] = s.Model, s.QoSDriver
		if s.Role == "spine" {
			spines[s.Name] = v
		} else {
			leaves[s.Name] = v
		}
	}
	all := map[string]any{"children": map[string]any{
		"rdma_hosts": map[string]any{"hosts": hosts},
		"leaves":     map[string]any{"hosts": leaves},
		"spines":     map[string]any{"hosts": spines},
	}}
	if l.KnownHosts != "" {
		all["vars"] = map[string]any{"ansible_ssh_common_args": "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=" + l.KnownHosts}
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(map[string]any{"all": all}); err != nil {
		return err
	}
	return enc.Close()
}
