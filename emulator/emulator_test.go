package emulator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest"
)

type lab struct {
	inv  *inventory.Lab
	pool *sshdrv.Pool
}

func start(t *testing.T) *lab {
	t.Helper()
	_, inv, pool := testlab.Start(t, "leafspine:1x2:2@100", nil, emulator.Options{Seed: 1}, sshdrv.Config{})
	if err := inv.Validate(); err != nil {
		t.Fatalf("the running lab's inventory is not valid: %v", err)
	}
	return &lab{inv: inv, pool: pool}
}

func (l *lab) exec(t *testing.T, ctx context.Context, host, cmd string) *sshdrv.Result {
	t.Helper()
	r, err := l.pool.Exec(ctx, testlab.Target(t, l.inv, host, sshdrv.EndpointSSH), cmd)
	if err != nil {
		t.Fatalf("%s: %s: %v", host, cmd, err)
	}
	return r
}

func TestHostToolsPrintWhatTheParsersRead(t *testing.T) {
	l := start(t)
	ctx := context.Background()
	devs, err := connectx.ParseDevInfo(string(l.exec(t, ctx, "h1", "ibv_devinfo").Stdout))
	if err != nil || devs[0].HCAID != "mlx5_0" || devs[0].Ports[0].LinkLayer != "Ethernet" {
		t.Errorf("ibv_devinfo: %+v %v", devs, err)
	}
	gids, err := connectx.ParseShowGIDs(string(l.exec(t, ctx, "h1", "show_gids").Stdout))
	h1, _ := l.inv.Host("h1")
	if err != nil || len(gids) != 4 || gids[3].Ver != "v2" || gids[3].IPv4 != h1.RNICs[0].IP {
		t.Errorf("show_gids: %+v %v", gids, err)
	}
	q, err := connectx.ParseMlnxQoS(string(l.exec(t, ctx, "h1", "mlnx_qos -i ens1f0").Stdout))
	if err != nil || q.Trust != "pcp" || len(q.TCs) != 8 {
		t.Errorf("mlnx_qos: %+v %v", q, err)
	}
	r := l.exec(t, ctx, "h1", "frobnicate --now")
	if r.ExitStatus != 127 || !strings.Contains(string(r.Stderr), "frobnicate: not found") {
		t.Errorf("unknown command: %+v", r)
	}
}

func TestPerftestPairThroughTheTwin(t *testing.T) {
	l := start(t)
	ctx := context.Background()
	h2, _ := l.inv.Host("h2")
	client := "ib_write_bw -d mlx5_0 -x 3 -s 65536 -n 1000 --report_gbits -F -p 18600 " + h2.RNICs[0].IP
	// No server yet: the real tool's failure.
	r := l.exec(t, ctx, "h1", client)
	if e := perftest.ClassifyError(string(r.Stderr)); r.ExitStatus != 1 || e == nil || e.Kind != perftest.ConnectFailed {
		t.Fatalf("client without server: %+v", r)
	}
	before, _, _ := connectx.ParseEthtoolStats(string(l.exec(t, ctx, "h1", "ethtool -S ens1f0").Stdout))
	srv := make(chan *sshdrv.Result, 1)
	go func() {
		srv <- l.exec(t, ctx, "h2", "ib_write_bw -d mlx5_0 -x 3 -s 65536 -n 1000 --report_gbits -F -p 18600")
	}()
	var out *sshdrv.Result
	for i := 0; i < 100; i++ { // until the server listens
		if out = l.exec(t, ctx, "h1", client); out.ExitStatus == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	rep, err := perftest.ParseBW(string(out.Stdout))
	if err != nil {
		t.Fatalf("client output: %v\n%s", err, out.Stdout)
	}
	if row := rep.Rows[0]; row.Bytes != 65536 || row.Iterations != 1000 || row.AvgGbps < 95 || row.AvgGbps > 100 {
		t.Errorf("one flow on an idle 100G path: %+v (want line rate minus headers, ~98)", row)
	}
	s := <-srv
	if s.ExitStatus != 0 || !strings.HasPrefix(string(s.Stdout), "\n************************************\n* Waiting for client to connect...") {
		t.Fatalf("server: %+v", s)
	}
	srep, err := perftest.ParseBW(string(s.Stdout))
	if err != nil || srep.Rows[0] != rep.Rows[0] {
		t.Errorf("a write server prints the client's numbers: %+v vs %+v (%v)", srep, rep, err)
	}
	after, _, _ := connectx.ParseEthtoolStats(string(l.exec(t, ctx, "h1", "ethtool -S ens1f0").Stdout))
	if grew := after["tx_vport_rdma_unicast_bytes"] - before["tx_vport_rdma_unicast_bytes"]; grew < 1000*65536 {
		t.Errorf("tx_vport_rdma_unicast_bytes grew by %d, want >= the %d bytes sent", grew, 1000*65536)
	}
}

func TestPgrepAndKillEndAProcess(t *testing.T) {
	l := start(t)
	ctx := context.Background()
	srv := make(chan *sshdrv.Result, 1)
	go func() { srv <- l.exec(t, ctx, "h2", "ib_write_bw -d mlx5_0 -p 18700") }()
	var pids string
	for i := 0; i < 100 && pids == ""; i++ {
		pids = strings.TrimSpace(string(l.exec(t, ctx, "h2", "pgrep -f 'ib_write_bw .*-p 18700'").Stdout))
		time.Sleep(10 * time.Millisecond)
	}
	if pids == "" {
		t.Fatal("pgrep did not find the running server")
	}
	if r := l.exec(t, ctx, "h2", "kill "+pids); r.ExitStatus != 0 {
		t.Fatalf("kill: %+v", r)
	}
	select {
	case r := <-srv:
		if r.ExitStatus == 0 {
			t.Error("a killed server must not exit 0")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the killed server kept running")
	}
	if r := l.exec(t, ctx, "h2", "pgrep -f 'ib_write_bw .*-p 18700'"); r.ExitStatus != 1 {
		t.Errorf("pgrep after kill: %+v", r)
	}
}
