package connectx_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
)

// host starts an emulated lab and returns a Run for one of its hosts.
func host(t *testing.T, name string) (connectx.Run, inventory.RNIC) {
	t.Helper()
	src, _ := inventory.Generate("leafspine:1x1:2@100")
	l, err := emulator.Start(context.Background(), src, emulator.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	inv := l.Inventory()
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts})
	t.Cleanup(func() { pool.Close() })
	h, _ := inv.Host(name)
	cred, _ := inv.CredentialFor(name)
	target := sshdrv.Target{Name: name, Addr: h.Mgmt.SSH, Cred: cred}
	return func(ctx context.Context, cmd string) ([]byte, error) {
		r, err := pool.Exec(ctx, target, cmd)
		if err != nil {
			return nil, err
		}
		return r.Stdout, r.Err()
	}, h.RNICs[0]
}

func TestProfilePlanApplyVerify(t *testing.T) {
	ctx := context.Background()
	run, rnic := host(t, "h1")
	p := filepath.Join(t.TempDir(), "rnic.yaml")
	os.WriteFile(p, []byte("trust: dscp\npfc_priorities: [3]\nroce_tos: 106\nroce_mode: 2\n"), 0o644)
	prof, err := connectx.LoadProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := connectx.ReadState(ctx, run, rnic, false)
	if err != nil {
		t.Fatal(err)
	}
	plan := prof.Diff("h1", rnic, st)
	var fields []string
	for _, c := range plan {
		fields = append(fields, c.Field+":"+c.From+"->"+c.To)
	}
	if got := strings.Join(fields, " "); got != "trust:pcp->dscp pfc:0,0,0,0,0,0,0,0->0,0,0,1,0,0,0,0 roce_tos:0->106" {
		t.Fatalf("plan: %s", got)
	}
	if applied, err := connectx.Apply(ctx, run, plan); err != nil || len(applied) != 3 {
		t.Fatalf("apply: %v (%d applied)", err, len(applied))
	}
	if st, err = connectx.ReadState(ctx, run, rnic, false); err != nil {
		t.Fatal(err)
	}
	if again := prof.Diff("h1", rnic, st); len(again) != 0 {
		t.Fatalf("a second plan after apply must be empty: %+v", again)
	}
	// Someone changes the host behind labctl's back: verify sees drift.
	if _, err := run(ctx, "mlnx_qos -i "+rnic.Netdev+" --pfc 0,0,0,0,0,0,0,0"); err != nil {
		t.Fatal(err)
	}
	st, _ = connectx.ReadState(ctx, run, rnic, false)
	if drift := prof.Diff("h1", rnic, st); len(drift) != 1 || drift[0].Field != "pfc" {
		t.Fatalf("drift: %+v", drift)
	}
}

func TestApplyReportsTheHostsAnswer(t *testing.T) {
	run, _ := host(t, "h2")
	bad := []connectx.Change{{Host: "h2", Field: "pfc", From: "x", To: "y", Command: "mlnx_qos -i ens1f0 --pfc 0,1"}}
	applied, err := connectx.Apply(context.Background(), run, bad)
	if err == nil || len(applied) != 0 || !strings.Contains(err.Error(), "host h2") ||
		!strings.Contains(err.Error(), "mlnx_qos -i ens1f0 --pfc 0,1") || !strings.Contains(err.Error(), "pfc list must have 8 items") {
		t.Fatalf("got %v", err)
	}
}

func TestProfileValidation(t *testing.T) {
	for _, doc := range []string{"trust: port\n", "pfc_priorities: [9]\n", "roce_tos: 300\n", "roce_mode: 3\n", "trsut: dscp\n"} {
		p := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(p, []byte(doc), 0o644)
		if _, err := connectx.LoadProfile(p); err == nil {
			t.Errorf("accepted %q", doc)
		}
	}
}

func TestPFCListLikeTheTool(t *testing.T) {
	for s, want := range map[string]string{"0,0,0,1,0,0,0,0": "", "0,1": "pfc list must have 8 items", "0,0,0,0,0,0,0,0,1": "Too many items for PFC", "0,0,0,2,0,0,0,0": "Bad value for PFC: 2"} {
		_, err := connectx.ParsePFCList(s)
		if (want == "") != (err == nil) || err != nil && err.Error() != want {
			t.Errorf("%s: %v, want %q", s, err, want)
		}
	}
}

func TestECNProfileThroughSysfs(t *testing.T) {
	ctx := context.Background()
	run, rnic := host(t, "h1")
	prof := &connectx.Profile{ECN: &connectx.ECNProfile{Priorities: []int{3},
		RP: map[string]int{"rpg_time_reset": 100, "rpg_ai_rate": 20}, NP: map[string]int{"min_time_between_cnps": 8}}}
	if err := prof.Validate(); err != nil {
		t.Fatal(err)
	}
	st, err := connectx.ReadState(ctx, run, rnic, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.ECN.RP["rpg_byte_reset"] != 32767 || !st.ECN.NPEnabled[0] {
		t.Fatalf("ConnectX defaults not read back: %+v", st.ECN)
	}
	plan := prof.Diff("h1", rnic, st)
	// 7 priorities off at each point, 2 RP and 1 NP parameter
	if len(plan) != 7+7+2+1 {
		t.Fatalf("plan: %d changes: %+v", len(plan), plan)
	}
	if _, err := connectx.Apply(ctx, run, plan); err != nil {
		t.Fatal(err)
	}
	st, _ = connectx.ReadState(ctx, run, rnic, true)
	if again := prof.Diff("h1", rnic, st); len(again) != 0 || st.ECN.RP["rpg_time_reset"] != 100 || st.ECN.NPEnabled[0] {
		t.Fatalf("after apply: %+v %+v", again, st.ECN)
	}
	bad := &connectx.Profile{ECN: &connectx.ECNProfile{RP: map[string]int{"rp_ai": 5}}}
	if err := bad.Validate(); err == nil {
		t.Error("a made-up sysfs name (rp_ai) was accepted")
	}
}
