package connectx_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/internal/shtest"
	"github.com/labctl/labctl/inventory"
)

// commands are every remote command the connectx driver builds for an
// RNIC: reading its state (both driver stacks) and setting every field
// of a profile, and reading its RDMA counters.
func commands(t *testing.T, r inventory.RNIC) []string {
	t.Helper()
	mlnxQoSOut, err := os.ReadFile("testdata/mlnx_qos_dscp.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	ecnOut := strings.Repeat("0\n", len(connectx.ECNFiles(r.Netdev)))
	for _, ofed := range []bool{true, false} {
		run := func(_ context.Context, cmd string) ([]byte, error) {
			cmds = append(cmds, cmd)
			switch f := strings.Fields(cmd)[0]; f {
			case "mlnx_qos":
				return mlnxQoSOut, nil
			case "cma_roce_tos":
				return []byte("106\n"), nil
			case "cma_roce_mode":
				return []byte("RoCE v2\n"), nil
			case "test":
				if ofed {
					return nil, nil
				}
				return nil, &sshdrv.CommandError{ExitStatus: 1}
			case "cat":
				return []byte(ecnOut), nil
			case "readlink":
				return []byte("../../../0000:3b:00.1\n"), nil
			}
			return nil, nil
		}
		st, err := connectx.ReadState(context.Background(), run, r, true)
		if ofed && err != nil {
			t.Fatalf("read state: %v", err)
		}
		if !ofed {
			continue
		}
		tos, dscp, prio := 98, 46, 5
		p := &connectx.Profile{Trust: "pcp", PFCPriorities: []int{4}, RoCETOS: &tos, RoCEMode: 1, DSCP2Prio: map[int]int{26: 4},
			PrioBuffer: []int{0, 0, 0, 0, 1, 0, 0, 0}, BufferSize: []int{1, 2, 0, 0, 0, 0, 0, 0}, CNPDSCP: &dscp, CNPPriority: &prio,
			ECN: &connectx.ECNProfile{Priorities: []int{4}}}
		for _, c := range p.Diff("h1", r, st) {
			cmds = append(cmds, c.Command)
		}
	}
	return append(cmds, connectx.HWCountersCommand(r.Device))
}

// TestHostileNamesReachTheShellAsOneWord: an RNIC device or netdev name
// that got past the inventory's load-time check (which refuses all of
// these with file:line, inventory.TestHostileNamesAreRefusedAtLoad) — a
// lab built in code, say — still reaches the host's shell as one word in
// every command the driver builds: a real /bin/sh sees the same words as
// for an ordinary name, with the hostile one in place, whole.
func TestHostileNamesReachTheShellAsOneWord(t *testing.T) {
	t.Parallel()
	const dev0, net0 = "mlx5devzero", "ens1netzero"
	plain := commands(t, inventory.RNIC{Device: dev0, Netdev: net0})
	if len(plain) < 10 {
		t.Fatalf("only %d commands: %q", len(plain), plain)
	}
	for _, v := range shtest.Hostile {
		got := commands(t, inventory.RNIC{Device: v + "D", Netdev: v + "N"})
		if len(got) != len(plain) {
			t.Fatalf("%q: %d commands, %d for an ordinary name", v, len(got), len(plain))
		}
		for i := range got {
			want := shtest.Words(t, plain[i])
			for j := range want {
				want[j] = strings.NewReplacer(dev0, v+"D", net0, v+"N").Replace(want[j])
			}
			if words := shtest.Words(t, got[i]); !slices.Equal(words, want) {
				t.Errorf("%q: the shell splits %q into %q, want %q", v, got[i], words, want)
			}
		}
	}
	for _, v := range shtest.Hostile { // the quoting itself
		if words := shtest.Words(t, "x "+sshdrv.Quote(v)); !slices.Equal(words, []string{"x", v}) {
			t.Errorf("Quote(%q): the shell sees %q", v, words)
		}
	}
}

// TestHostileNetdevReachesTheEmulatedHostWhole: over the emulated lab's
// real SSH, the host's mlnx_qos gets a hostile netdev as its one -i
// argument, and names it whole in its complaint (the emulated shell
// refuses unquoted ; | & outright, so a split name would fail otherwise).
func TestHostileNetdevReachesTheEmulatedHostWhole(t *testing.T) {
	t.Parallel()
	run, rnic := host(t, "h1")
	for _, v := range shtest.Hostile {
		r := rnic
		r.Netdev = v
		_, err := connectx.ReadState(context.Background(), run, r, false)
		if err == nil || !strings.Contains(err.Error(), "no such device "+v) {
			t.Errorf("%q: %v, want mlnx_qos to name the whole device", v, err)
		}
	}
}
