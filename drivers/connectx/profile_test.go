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
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
)

// host starts an emulated lab and returns a Run for one of its hosts; h2
// runs the upstream mlx5 driver, h1 MLNX_OFED.
func host(t *testing.T, name string) (connectx.Run, inventory.RNIC) {
	t.Helper()
	_, inv, pool := testlab.Start(t, "leafspine:1x1:2@100", nil, emulator.Options{InboxDriverHosts: []string{"h2"}}, sshdrv.Config{})
	h, _ := inv.Host(name)
	target := testlab.Target(t, inv, name, sshdrv.EndpointSSH)
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

func TestProfileErrorsNameFileLineField(t *testing.T) {
	for doc, want := range map[string]string{
		"trust: port\n":                                     `:1: trust: "port": want pcp (classify by the VLAN tag's 802.1p priority) or dscp`,
		"trust: dscp\npfc_priorities: [3, 9]\n":             ":2: pfc_priorities[1]: 9 is not a priority",
		"roce_tos: 300\n":                                   ":1: roce_tos: 300 is not a ToS byte",
		"roce_mode: 3\n":                                    ":1: roce_mode: 3 (want 1 or 2)",
		"trsut: dscp\n":                                     ":1: trsut: unknown field (known here: trust, pfc_priorities,",
		"dscp2prio: {26: 3}\n":                              ":1: dscp2prio: needs trust: dscp",
		"trust: dscp\ndscp2prio:\n  26: 9\n":                ":3: dscp2prio.26: 9 is not a priority",
		"prio2buffer: [0, 0, 0, 1]\n":                       ":1: prio2buffer: want 8 buffers",
		"cnp_dscp: 64\n":                                    ":1: cnp_dscp: 64 is not a DSCP",
		"cnp_priority: 6\necn:\n  np: {cnp_802p_prio: 6}\n": ":3: ecn.np.cnp_802p_prio: given twice",
		"ecn:\n  rp: {rp_ai: 5}\n":                          ":2: ecn.rp.rp_ai: unknown reaction-point parameter",
		"cnp_generation: always\n":                          `:1: cnp_generation: "always": want per_packet`,
		"ecn:\n  np: {min_time_between_cnps: 4}\ncnp_generation: per_packet\n":   ":3: cnp_generation: per_packet means ecn.np.min_time_between_cnps 0, not 4",
		"cnp_generation: min_interval\necn:\n  np: {min_time_between_cnps: 0}\n": ":1: cnp_generation: min_interval needs ecn.np.min_time_between_cnps above 0",
		"trust: dscp\nhost_lb_params: {dynamic: \"false\"}\n":                    ":2: host_lb_params: parameters without host_lb",
	} {
		p := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(p, []byte(doc), 0o644)
		_, err := connectx.LoadProfile(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", doc, err, want)
		}
	}
}

// An OFED host: CNP DSCP and priority are sysfs files under roce_np.
func TestCNPAndMlnxQoSMapsOnOFED(t *testing.T) {
	ctx := context.Background()
	run, rnic := host(t, "h1")
	dscp, prio := 46, 7
	prof := &connectx.Profile{Trust: "dscp", DSCP2Prio: map[int]int{26: 4, 46: 5}, PrioBuffer: []int{0, 0, 0, 1, 0, 0, 0, 0},
		BufferSize: []int{130944, 130944, 0, 0, 0, 0, 0, 0}, CNPDSCP: &dscp, CNPPriority: &prio}
	st, err := connectx.ReadState(ctx, run, rnic, prof.NeedsECN())
	if err != nil {
		t.Fatal(err)
	}
	if st.ECN.Driver != connectx.DriverOFED {
		t.Fatalf("h1 probed as %s", st.ECN.Driver)
	}
	var fields []string
	for _, c := range prof.Diff("h1", rnic, st) {
		fields = append(fields, c.Field+":"+c.From+"->"+c.To)
	}
	// DSCP 46 is on priority 5 already by the firmware's dscp>>3 map
	if got := strings.Join(fields, " "); got != "trust:pcp->dscp dscp2prio[26]:3->4 prio2buffer:0,0,0,0,0,0,0,0->0,0,0,1,0,0,0,0 cnp_dscp:48->46 cnp_priority:6->7" {
		t.Fatalf("plan: %s", got)
	}
	if _, err := connectx.Apply(ctx, run, prof.Diff("h1", rnic, st)); err != nil {
		t.Fatal(err)
	}
	st, _ = connectx.ReadState(ctx, run, rnic, true)
	if d := prof.Diff("h1", rnic, st); len(d) != 0 || st.QoS.DSCP2Prio[26] != 4 || st.ECN.NP["cnp_dscp"] != 46 {
		t.Fatalf("after apply: %+v", d)
	}
}

// An upstream-driver host: no sysfs ecn tree; DCQCN parameters and CNP
// settings through debugfs, no per-priority enable (a note, not a change).
func TestInboxDriverHostUsesDebugfs(t *testing.T) {
	ctx := context.Background()
	run, rnic := host(t, "h2")
	prio := 6
	prof := &connectx.Profile{CNPPriority: &prio, ECN: &connectx.ECNProfile{Priorities: []int{3},
		RP: map[string]int{"rpg_time_reset": 100, "rpg_ai_rate": 20}, NP: map[string]int{"min_time_between_cnps": 8}}}
	// CNPs take the request's priority until np_cnp_prio is written
	st, err := connectx.ReadState(ctx, run, rnic, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(ctx, "echo 1 > "+st.ECN.Dir+"/np_cnp_prio_mode"); err != nil {
		t.Fatal(err)
	}
	st, _ = connectx.ReadState(ctx, run, rnic, true)
	if st.ECN.Driver != connectx.DriverInbox || st.ECN.Dir != "/sys/kernel/debug/mlx5/0000:04:00.0/cc_params" || st.ECN.RP["rpg_time_reset"] != 300 {
		t.Fatalf("state: %+v", st.ECN)
	}
	plan := prof.Diff("h2", rnic, st)
	got := planLines(plan)
	want := []string{
		"cnp_priority:request->6 [echo 6 > /sys/kernel/debug/mlx5/0000:04:00.0/cc_params/np_cnp_prio]",
		"ecn.roce_np.min_time_between_cnps:0->8 [echo 8 > /sys/kernel/debug/mlx5/0000:04:00.0/cc_params/np_min_time_between_cnps]",
		"ecn.roce_rp.rpg_ai_rate:5->20 [echo 20 > /sys/kernel/debug/mlx5/0000:04:00.0/cc_params/rp_ai_rate]",
		"ecn.roce_rp.rpg_time_reset:300->100 [echo 100 > /sys/kernel/debug/mlx5/0000:04:00.0/cc_params/rp_time_reset]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("plan:\n%s", strings.Join(got, "\n"))
	}
	if notes := prof.Notes(st); len(notes) != 1 || !strings.Contains(notes[0], "no per-priority ECN enable") {
		t.Fatalf("notes: %v", notes)
	}
	if _, err := connectx.Apply(ctx, run, plan); err != nil {
		t.Fatal(err)
	}
	st, _ = connectx.ReadState(ctx, run, rnic, true)
	if d := prof.Diff("h2", rnic, st); len(d) != 0 || st.ECN.CNPPrioMode != 0 {
		t.Fatalf("after apply: %+v mode %d", d, st.ECN.CNPPrioMode)
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
	st, err := connectx.ReadState(ctx, run, rnic, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.ECN.RP["rpg_time_reset"] != 300 || !st.ECN.NPEnabled[0] {
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
}

// TestCNPGenerationPlansTheNPInterval: cnp_generation sets the one RNIC
// knob min_time_between_cnps: min_interval sets the firmware default (4 us)
// on an emulated host, which starts as the twin runs (0: a CNP per marked
// packet, the papers' ns-3 code bases), and per_packet sets it back to 0.
func TestCNPGenerationPlansTheNPInterval(t *testing.T) {
	ctx := context.Background()
	run, rnic := host(t, "h1")
	file := "/sys/class/net/" + rnic.Netdev + "/ecn/roce_np/min_time_between_cnps"
	for _, tc := range []struct{ mode, want string }{
		{connectx.CNPMinInterval, "cnp_generation:0->4 [echo 4 > " + file + "]"},
		{connectx.CNPPerPacket, "cnp_generation:4->0 [echo 0 > " + file + "]"},
	} {
		prof := &connectx.Profile{CNPGeneration: tc.mode}
		st, err := connectx.ReadState(ctx, run, rnic, true)
		if err != nil {
			t.Fatal(err)
		}
		plan := prof.Diff("h1", rnic, st)
		if got := strings.Join(planLines(plan), "\n"); got != tc.want {
			t.Fatalf("%s: plan\n%s\nwant\n%s", tc.mode, got, tc.want)
		}
		if _, err := connectx.Apply(ctx, run, plan); err != nil {
			t.Fatal(err)
		}
	}
}

// planLines prints a plan's changes as field:from->to [command].
func planLines(plan []connectx.Change) []string {
	var out []string
	for _, c := range plan {
		out = append(out, c.Field+":"+c.From+"->"+c.To+" ["+c.Command+"]")
	}
	return out
}
