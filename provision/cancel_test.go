package provision_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/provision"
)

// TestPlanStopsWhenInterrupted: a plan waiting on a switch that accepts a
// connection and never answers ends as soon as its context does (what
// SIGINT or SIGTERM does to labctl's), not after the dial or step
// timeouts.
func TestPlanStopsWhenInterrupted(t *testing.T) {
	t.Parallel()
	src, _, _ := emulated(t, "leafspine:2x2:2@100")
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	go func() { // accept, then say nothing
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	inv := *src
	inv.Switches = slices.Clone(src.Switches)
	inv.Switches[1].Mgmt.NETCONF = hole.Addr().String()
	pool := sshdrv.NewPool(sshdrv.Config{KnownHosts: inv.KnownHosts})
	defer pool.Close()

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = provision.PlanSwitches(ctx, pool, &inv, fullProfile(100000), nil)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the plan took %v after its context ended at 300ms", took)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want it to say the plan was cancelled", err)
	}
}
