package openconfig

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/drivers/switchqos"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func profile() switchqos.Config {
	q := switchqos.Config{XoffBytes: 262144, XonBytes: 196608, HeadroomBytes: 65536,
		Pools:     map[string]int64{switchqos.PoolLossless: 8 << 20},
		ECN:       map[int]switchqos.ECN{3: {KminBytes: 100000, KmaxBytes: 400000, PmaxPercent: 20}},
		DSCP:      map[int]int{26: 3, 48: 6},
		Scheduler: switchqos.DWRR, Weights: map[int]int{0: 1, 3: 4},
	}
	q.PFC[3] = true
	return q
}

// TestRenderParse: what Render writes for a NOS, Parse reads back as the
// profile less what the NOS lacks (Want), on every port, for every entry
// of the deviations table.
func TestRenderParse(t *testing.T) {
	t.Parallel()
	ports := []string{"Ethernet0", "1/0"}
	for os, dev := range Deviations() {
		for _, alpha := range []float64{0, 0.125} {
			q := profile()
			if alpha > 0 {
				q.Alpha, q.XoffBytes = alpha, 0
			}
			var have switchqos.Config
			want := Want(q, have, dev)
			l := Render(ports, want, dev)
			for _, p := range ports {
				got, err := Parse(l, p)
				if err != nil {
					t.Fatalf("%s: %v", os, err)
				}
				if d := switchqos.Diff(got, want); len(d) > 0 {
					t.Errorf("%s alpha %v port %s: %v", os, alpha, p, d)
				}
				if dev.PFC && got.PFC[3] || !dev.PFC && !got.PFC[3] {
					t.Errorf("%s: PFC read back %v with deviation %+v", os, got.PFC, dev)
				}
			}
		}
	}
}

// TestRenderGolden: the leaves set on an Enterprise SONiC switch.
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	l := Render([]string{"Ethernet0"}, profile(), Deviations()["enterprise-sonic"])
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(l)) {
		fmt.Fprintf(&b, "%s = %s\n", k, l[k])
	}
	p := "testdata/enterprise-sonic.leaves"
	if *update {
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s differs (go test -update):\n%s", p, b.Bytes())
	}
}

func TestPathRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"/qos/interfaces/interface[interface-id=1/0]/output/queues/queue[name=3]/config/queue-management-profile",
		"/qos/classifiers/classifier[name=LABCTL_DSCP]/terms/term[id=dscp-26]/actions/config/target-group",
		"/a[x=1][y=2]/b",
	} {
		p, err := ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatPath(nil, p); got != s {
			t.Errorf("ParsePath(%q) formats as %q", s, got)
		}
	}
	for _, bad := range []string{"", "qos", "/qos//x", "/a[x]", "/a[x=1", "/a[x=1]b", "/a[=1]"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) accepted", bad)
		}
	}
}

// TestRegistryKnowsEveryOS: the os: values the registry sends to this
// driver are those its deviations table has.
func TestRegistryKnowsEveryOS(t *testing.T) {
	t.Parallel()
	r := qosdriver.Builtin()
	for _, os := range OSNames() {
		if d, err := r.Pick("", os, ""); err != nil || d != qosdriver.OpenConfig {
			t.Errorf("os %s picks %q, %v", os, d, err)
		}
	}
	d, _ := r.Lookup(qosdriver.OpenConfig)
	if !slices.Equal(d.OS, OSNames()) {
		t.Errorf("registry OS %v, deviations %v", d.OS, OSNames())
	}
}

func FuzzParsePath(f *testing.F) {
	f.Add("/qos/interfaces/interface[interface-id=1/0]/pfc/pfc-priorities/pfc-priority[dot1p=3]/config/enable")
	f.Add("/a[x=1][y=2]/b")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		again, err := ParsePath(FormatPath(nil, p))
		if err != nil || FormatPath(nil, again) != FormatPath(nil, p) {
			t.Fatalf("%q: formatted path does not parse back: %v", s, err)
		}
	})
}

func FuzzParse(f *testing.F) {
	l := Render([]string{"Ethernet0"}, profile(), Deviations()["enterprise-sonic"])
	var b bytes.Buffer
	for k, v := range l {
		fmt.Fprintf(&b, "%s\x00%s\x00", k, v)
	}
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		parts := bytes.Split(data, []byte{0})
		leaves := Leaves{}
		for i := 0; i+1 < len(parts); i += 2 {
			leaves[string(parts[i])] = string(parts[i+1])
		}
		_, _ = Parse(leaves, "Ethernet0")
	})
}

// TestFlattenGetAnswer: a target's JSON_IETF answer to Get /qos (module
// prefixes, lists of keyed entries, RFC 7951 64-bit numbers as strings,
// the PFC augment) reads as the profile it holds.
func TestFlattenGetAnswer(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/get-qos.json_ietf")
	if err != nil {
		t.Fatal(err)
	}
	l := Leaves{}
	if err := FlattenJSON(l, "/qos", data); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(l, "Ethernet0")
	if err != nil {
		t.Fatal(err)
	}
	want := switchqos.Config{Alpha: 0.125, HeadroomBytes: 65536,
		ECN:       map[int]switchqos.ECN{3: {KminBytes: 100000, KmaxBytes: 400000, PmaxPercent: 20}},
		DSCP:      map[int]int{26: 3, 48: 6},
		Scheduler: switchqos.DWRR, Weights: map[int]int{0: 1, 3: 4}}
	want.PFC[3] = true
	if d := switchqos.Diff(got, want); len(d) > 0 {
		t.Errorf("%v\nleaves: %v", d, l)
	}
	for _, bad := range []string{`{"x": [{"name": "a"}]}`, `{"queue": [{"id": "a"}]}`, `{"queue": [1]}`, `[`} {
		if err := FlattenJSON(Leaves{}, "/qos", []byte(bad)); err == nil {
			t.Errorf("FlattenJSON(%s) accepted", bad)
		}
	}
}

func FuzzFlattenJSON(f *testing.F) {
	data, _ := os.ReadFile("testdata/get-qos.json_ietf")
	f.Add(data)
	f.Add([]byte(`{"openconfig-qos:queues": {"queue": [{"name": "3"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := Leaves{}
		if FlattenJSON(l, "/qos", data) == nil {
			_, _ = Parse(l, "Ethernet0")
		}
	})
}

// TestJSONIETFRoundTrip: leaves written as a Get answer read back the same.
func TestJSONIETFRoundTrip(t *testing.T) {
	t.Parallel()
	l := Render([]string{"Ethernet0", "1/0"}, profile(), Deviations()["enterprise-sonic"])
	data, err := JSONIETF(l, "/qos")
	if err != nil {
		t.Fatal(err)
	}
	back := Leaves{}
	if err := FlattenJSON(back, "/qos", data); err != nil {
		t.Fatal(err)
	}
	for k, v := range l {
		if back[k] != v {
			t.Errorf("%s: %q after the round trip, want %q", k, back[k], v)
		}
	}
	if len(back) < len(l) {
		t.Errorf("%d leaves back of %d", len(back), len(l))
	}
}
