package sonic

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/labctl/labctl/drivers/switchqos"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update to rewrite):\n%s", p, got)
	}
}

func sample(t *testing.T) DB {
	t.Helper()
	data, err := os.ReadFile("testdata/config_db.json")
	if err != nil {
		t.Fatal(err)
	}
	db, err := ParseDB(data)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestParseQoSGolden reads a CONFIG_DB dump in sonic-cfggen's format (an
// AZURE-template lossless setup: PFC 3,4, dynamic_th -3, DWRR schedulers,
// the AZURE_LOSSLESS WRED profile) into labctl's model; Ethernet4 writes
// its references in the older [TABLE|name] form and reads the same.
func TestParseQoSGolden(t *testing.T) {
	t.Parallel()
	db := sample(t)
	if _, ok := db["VLAN"]; ok {
		t.Error("a table outside QoS was kept")
	}
	e0, err := ParseQoS(db, "Ethernet0")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(e0, "", "  ")
	golden(t, "Ethernet0.golden.json", append(out, '\n'))
	if e0.Alpha != 0.125 || !e0.PFC[3] || !e0.PFC[4] || e0.HeadroomBytes != 18432 || e0.ECN[3].KmaxBytes != 2097152 || e0.Scheduler != switchqos.DWRR {
		t.Errorf("Ethernet0: %+v", e0)
	}
	e4, err := ParseQoS(db, "Ethernet4")
	if err != nil {
		t.Fatal(err)
	}
	if d := switchqos.Diff(e4, withoutQueue0(e0)); len(d) > 0 {
		t.Errorf("Ethernet4 (legacy references) differs from Ethernet0: %v", d)
	}
}

func withoutQueue0(c switchqos.Config) switchqos.Config {
	c.Weights = map[int]int{3: c.Weights[3]}
	delete(c.ECN, 4)
	return c
}

func profile() switchqos.Config {
	q := switchqos.Config{XoffBytes: 262144, XonBytes: 196608, HeadroomBytes: 65536,
		Pools:     map[string]int64{switchqos.PoolLossless: 8 << 20},
		ECN:       map[int]switchqos.ECN{3: {KminBytes: 100000, KmaxBytes: 400000, PmaxPercent: 20}},
		DSCP:      map[int]int{26: 3},
		Scheduler: switchqos.Strict,
		Remove:    switchqos.Removal{ECN: []int{4}, DSCP: []int{46}},
	}
	q.PFC[3] = true
	return q
}

// TestRenderPatchApply: the patch from the sample to a profile, applied
// as the switch applies it, gives every port the profile; the patch is
// golden (its operations are what config apply-patch is sent), and a
// second render of the result changes nothing.
func TestRenderPatchApply(t *testing.T) {
	t.Parallel()
	have := sample(t)
	ports := []string{"Ethernet0", "Ethernet4"}
	want := profile()
	desired, err := Render(have, ports, want)
	if err != nil {
		t.Fatal(err)
	}
	ops := Patch(have, desired)
	out, _ := json.MarshalIndent(ops, "", "    ")
	golden(t, "patch.golden.json", append(out, '\n'))
	got, err := Apply(have, ops)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, desired) {
		t.Fatalf("applying the patch does not give the rendered DB")
	}
	for _, p := range ports {
		q, err := ParseQoS(got, p)
		if err != nil {
			t.Fatal(err)
		}
		if d := switchqos.Diff(q, want); len(d) > 0 {
			t.Errorf("%s after the patch: %v", p, d)
		}
		if q.PFC[4] || q.DSCP[46] != 0 || q.DSCP[3] != 3 {
			t.Errorf("%s: priority 4 still lossless, DSCP 46 kept or DSCP 3 lost: %+v", p, q)
		}
	}
	again, err := Render(got, ports, want)
	if err != nil {
		t.Fatal(err)
	}
	if ops := Patch(got, again); len(ops) != 0 {
		t.Errorf("a second render patches again: %+v", ops)
	}
	if len(Patch(have, have)) != 0 {
		t.Error("a DB patched to itself")
	}
	dyn := want
	dyn.Alpha, dyn.XoffBytes = 0.25, 0
	d2, _ := Render(got, ports, dyn)
	if q, _ := ParseQoS(d2, "Ethernet0"); q.Alpha != 0.25 || q.XoffBytes != 0 || d2[TableBufferPool][LosslessPool]["mode"] != "dynamic" {
		t.Errorf("dynamic threshold: %+v, pool %v", q, d2[TableBufferPool][LosslessPool])
	}
}

// TestPointerEscapes: a port named like a front-panel path (1/0) makes
// keys with "/" that JSON pointers escape, and Apply reads them back.
func TestPointerEscapes(t *testing.T) {
	t.Parallel()
	want := profile()
	desired, err := Render(DB{}, []string{"1/0", "Ethernet1/1"}, want)
	if err != nil {
		t.Fatal(err)
	}
	ops := Patch(DB{TablePortQoSMap: {"1/0": {"x": "y"}}}, desired)
	found := false
	for _, op := range ops {
		found = found || op.Path == "/PORT_QOS_MAP/1~10/pfc_enable"
	}
	if !found {
		t.Errorf("no escaped path for port 1/0 in %+v", ops)
	}
	got, err := Apply(DB{TablePortQoSMap: {"1/0": {"x": "y"}}}, ops)
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := ParseQoS(got, "Ethernet1/1"); !q.PFC[3] {
		t.Errorf("port Ethernet1/1: %+v", q)
	}
	if _, err := Render(DB{}, []string{"Ethernet0; reboot"}, want); err == nil {
		t.Error("an unsafe port name was rendered")
	}
}

// TestRemovalsLeaveNoOrphans: turning a queue's ECN off drops its WRED
// profile once no port names it, and removing every DSCP entry drops the
// map and the ports' reference (CONFIG_DB holds no empty entry).
func TestRemovalsLeaveNoOrphans(t *testing.T) {
	t.Parallel()
	ports := []string{"Ethernet0"}
	on := profile()
	db, err := Render(DB{}, ports, on)
	if err != nil {
		t.Fatal(err)
	}
	off := on
	off.ECN, off.DSCP = nil, nil
	off.Remove = switchqos.Removal{ECN: []int{3}, DSCP: []int{26}}
	got, err := Render(db, ports, off)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[TableWREDProfile][QueueObject(3)]; ok {
		t.Error("the WRED profile of queue 3 outlived its last reference")
	}
	if _, ok := got[TableDSCPToTC][MapName]; ok || got[TablePortQoSMap]["Ethernet0"]["dscp_to_tc_map"] != "" {
		t.Errorf("an empty DSCP map is kept: %v %v", got[TableDSCPToTC], got[TablePortQoSMap])
	}
	q, err := ParseQoS(got, "Ethernet0")
	if err != nil || len(q.ECN) != 0 || len(q.DSCP) != 0 {
		t.Errorf("after the removals: %+v %v", q, err)
	}
	for tbl, keys := range got {
		for k, f := range keys {
			if len(f) == 0 {
				t.Errorf("empty entry %s|%s", tbl, k)
			}
		}
	}
}

func TestApplyRefuses(t *testing.T) {
	t.Parallel()
	for _, ops := range [][]Op{
		{{Op: "remove", Path: "/QUEUE/Ethernet9|3"}},
		{{Op: "add", Path: "/DEVICE_METADATA/localhost/hostname", Value: "x"}},
		{{Op: "move", Path: "/QUEUE"}},
		{{Op: "replace", Path: "/QUEUE/Ethernet0|3/nope", Value: "x"}},
		{{Op: "add", Path: "/NOPE_TABLE", Value: map[string]any{}}},
		{{Op: "add", Path: "QUEUE", Value: "x"}},
	} {
		if _, err := Apply(DB{TableQueue: {"Ethernet0|3": {"scheduler": "s"}}}, ops); err == nil {
			t.Errorf("Apply(%+v) accepted", ops)
		}
	}
}

func FuzzParseDB(f *testing.F) {
	data, _ := os.ReadFile("testdata/config_db.json")
	f.Add(data)
	f.Add([]byte(`{"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3,9"}}}`))
	f.Add([]byte(`{"BUFFER_PG": {"Ethernet0|4-3": {"profile": "x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		db, err := ParseDB(data)
		if err != nil {
			return
		}
		for _, k := range []string{"Ethernet0", "Ethernet4"} {
			if q, err := ParseQoS(db, k); err == nil {
				if _, err := Render(db, []string{k}, q); err != nil {
					t.Fatalf("a parsed configuration does not render: %v", err)
				}
			}
		}
	})
}

func FuzzParsePatch(f *testing.F) {
	data, _ := os.ReadFile("testdata/patch.golden.json")
	f.Add(data)
	f.Add([]byte(`[{"op": "remove", "path": "/QUEUE/a~1b"}]`))
	f.Add([]byte(`[{"op": "add", "path": "/QUEUE/x~2", "value": {}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ops, err := ParsePatch(data)
		if err != nil {
			return
		}
		base := DB{TableQueue: {"Ethernet0|3": {"scheduler": "s"}}}
		if _, err := Apply(base, ops); err == nil && len(base[TableQueue]["Ethernet0|3"]) != 1 {
			t.Fatal("Apply changed its input")
		}
	})
}
