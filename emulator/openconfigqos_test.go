package emulator

import (
	"context"
	"strings"
	"testing"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/labctl/labctl/drivers/openconfig"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/inventory"
)

// An OpenConfig switch starts on the twin's default QoS, refuses a Set
// whose result a switch could not hold (changing nothing), and a Set it
// takes, or the driver's rollback, becomes its twin switch. A switch
// that does not pick the driver does not serve Set.
func TestOpenConfigSetDrivesTheTwin(t *testing.T) {
	t.Parallel()
	l, _, _ := leaf1Lab(t, func(sw *inventory.Switch) { sw.QoSDriver, sw.OS = "", "enterprise-sonic" })
	ctx := context.Background()
	leaf1, _ := l.Inventory().Switch("leaf1")
	s, err := openconfig.Dial("leaf1", leaf1.Mgmt.GNMI, leaf1.OS, leaf1.PortNames(), gnmiTLS(t, l.Inventory()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ports, have, err := s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := s.Want(defaultQoS(1))
	for _, p := range ports {
		if d := switchqos.Diff(have[p], start); len(d) > 0 {
			t.Errorf("port %s at start: %v", p, d)
		}
	}
	def := l.twin.switchConfig(t, "leaf1")

	bad := start
	bad.ECN = map[int]switchqos.ECN{3: {KminBytes: 900000, KmaxBytes: 300000, PmaxPercent: 10}}
	if _, err := s.Stage(ctx, bad); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "kmin_bytes") {
		t.Fatalf("kmin above kmax: %v", err)
	}
	if err := s.Check(ctx, start); err != nil {
		t.Fatalf("a refused Set changed the switch: %v", err)
	}

	want := start
	want.ECN = map[int]switchqos.ECN{3: {KminBytes: 50000, KmaxBytes: 300000, PmaxPercent: 10}}
	want.PFC[4] = true
	if _, err := s.Stage(ctx, want); err != nil {
		t.Fatal(err)
	}
	if c := l.twin.switchConfig(t, "leaf1"); c.ECNKminBytes != 50000 || c.LosslessPrios != 1<<3|1<<4 {
		t.Errorf("the twin after Set: ECN kmin %d, lossless %b", c.ECNKminBytes, c.LosslessPrios)
	}
	if err := s.Check(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if c := l.twin.switchConfig(t, "leaf1"); c != def {
		t.Errorf("after the rollback the twin is not back:\n%+v\n%+v", c, def)
	}

	spine1, _ := l.Inventory().Switch("spine1") // NETCONF
	conn, err := grpc.NewClient(spine1.Mgmt.GNMI, gnmiTLS(t, l.Inventory()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := pb.NewGNMIClient(conn).Set(ctx, &pb.SetRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("Set on a NETCONF switch: %v", err)
	}
}
