package tofino_test

import (
	"os"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/tofino"
)

// The parsers of what comes from outside (bundle files, switch output)
// must never panic, and what they accept must be self-consistent.

func FuzzParseManifest(f *testing.F) {
	b, _ := os.ReadFile(example + "/image.yaml")
	f.Add(b)
	f.Add([]byte("name: x\nfiles: [{path: a, sha256: b}]\n"))
	f.Add([]byte("lb: {scheme: drill, params: {d: 2}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := tofino.ParseManifest(data, "image.yaml")
		if err != nil {
			return
		}
		if _, _, err := tofino.ParseRef(m.Ref()); err != nil {
			t.Fatalf("accepted a manifest whose ref %q does not parse: %v", m.Ref(), err)
		}
		for _, f := range m.Files {
			if strings.HasPrefix(f.Path, "/") || strings.Contains("/"+f.Path+"/", "/../") {
				t.Fatalf("accepted path %q", f.Path)
			}
		}
	})
}

func FuzzParseSHA256Sum(f *testing.F) {
	f.Add([]byte("d5d9bc3538880d702e4482216e1c45563bad24772dfd88499a6a141780d1c6c4  /opt/x/bf-rt.json\n"))
	f.Add([]byte(`\d5d9bc3538880d702e4482216e1c45563bad24772dfd88499a6a141780d1c6c4 *a\\b\nc` + "\n"))
	f.Add([]byte("sha256sum: x: No such file or directory\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sums, err := tofino.ParseSHA256Sum(data)
		if err != nil {
			return
		}
		for name, sum := range sums {
			if len(sum) != 64 || name == "" {
				t.Fatalf("accepted %q -> %q", name, sum)
			}
		}
	})
}

func FuzzParseConf(f *testing.F) {
	b, _ := os.ReadFile(example + "/drill_lb.conf")
	f.Add(b)
	f.Add([]byte(`{"p4_program_list": [{"program-name": "switch"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := tofino.ParseConf(data)
		if err != nil {
			return
		}
		if len(c.Programs) == 0 {
			t.Fatal("accepted a conf with no program")
		}
		if _, err := tofino.InstallConf(data, "/opt/labctl/images/x/1"); err != nil {
			t.Fatalf("InstallConf refused a conf ParseConf accepted: %v", err)
		}
	})
}

func FuzzParseSwitchdLog(f *testing.F) {
	for _, p := range []string{"testdata/switchd-sde9.7.log", "testdata/switchd-sde9.13-background.log"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l := tofino.ParseSwitchdLog(data)
		if l.Devices < -1 || len(l.Tail) > 8 {
			t.Fatalf("%+v", l)
		}
	})
}

func FuzzParsePortsUp(f *testing.F) {
	f.Add("labctl-tm portup 1/0 True\nlabctl-tm portup 2/0 False\n")
	f.Add("labctl-tm portup 1/0\n")
	f.Fuzz(func(t *testing.T, out string) {
		ports := []string{"1/0", "2/0"}
		up, err := tofino.ParsePortsUp(out, ports)
		if err == nil && (up < 0 || up > len(ports)) {
			t.Fatalf("%d ports up of %d", up, len(ports))
		}
	})
}
