package inventory

import (
	"strings"
	"testing"
)

// TestHostileNamesAreRefusedAtLoad feeds shell metacharacters, path escapes
// and control characters through every lab string that reaches a remote
// shell, a gNMI path or a file name: each is refused with file:line: field
// when the lab is loaded, before any device is touched.
func TestHostileNamesAreRefusedAtLoad(t *testing.T) {
	t.Parallel()
	hostile := []string{"a;reboot", "$(id)", "`id`", "a b", "a\nb", "../etc", "a/../../b", "-rf", "a|b", "a&b", "a>b", "a'b", `a"b`, "a\x00b", "a\\b"}
	fields := []struct {
		field string
		lab   func(v string) string // a valid lab with v in the field
		path  string
	}{
		{"host name", func(v string) string { return lab(q(v), "mlx5_0", "ens1f0", "Ethernet1", "admin", "TOKEN") }, "hosts[0].name"},
		{"RNIC device", func(v string) string { return lab("h1", q(v), "ens1f0", "Ethernet1", "admin", "TOKEN") }, "hosts[0].rnics[0].device"},
		{"RNIC netdev", func(v string) string { return lab("h1", "mlx5_0", q(v), "Ethernet1", "admin", "TOKEN") }, "hosts[0].rnics[0].netdev"},
		{"switch port", func(v string) string { return lab("h1", "mlx5_0", "ens1f0", q(v), "admin", "TOKEN") }, "switches[0].ports[0].name"},
		{"user", func(v string) string { return lab("h1", "mlx5_0", "ens1f0", "Ethernet1", q(v), "TOKEN") }, "credentials.default.user"},
		{"token_env", func(v string) string { return lab("h1", "mlx5_0", "ens1f0", "Ethernet1", "admin", q(v)) }, "services.influxdb.token_env"},
	}
	for _, f := range fields {
		for _, v := range hostile {
			l, err := Parse([]byte(f.lab(v)), "lab.yaml")
			if err == nil {
				err = l.Validate()
			}
			if err == nil {
				t.Errorf("%s %q: accepted", f.field, v)
				continue
			}
			if !strings.Contains(err.Error(), "lab.yaml:") || !strings.Contains(err.Error(), f.path+": unsafe") {
				t.Errorf("%s %q: error does not name %s:\n%v", f.field, v, f.path, err)
			}
		}
	}
	if l, err := Parse([]byte(lab("h1", "mlx5_0", "ens1f0np0", "Ethernet1/1", "lab.admin", "INFLUX_TOKEN")), "lab.yaml"); err != nil {
		t.Fatal(err)
	} else if err := l.Validate(); err != nil {
		t.Errorf("a lab of ordinary names is refused: %v", err)
	}
}

// q quotes a value as a YAML double-quoted scalar (escapes included).
func q(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\x00", `\0`)
	return `"` + r.Replace(v) + `"`
}

func lab(host, dev, netdev, port, user, tokenEnv string) string {
	return `name: t
emulated: true
credentials:
  default: {user: ` + user + `, agent: true}
switches:
  - name: leaf1
    role: leaf
    ports: [{name: ` + port + `, speed_gbps: 100}]
hosts:
  - name: ` + host + `
    rnics: [{device: ` + dev + `, netdev: ` + netdev + `, gid_index: 3, speed_gbps: 100, ip: 10.0.0.1}]
services:
  influxdb: {url: "http://127.0.0.1:8086", bucket: b, token_env: ` + tokenEnv + `}
`
}
