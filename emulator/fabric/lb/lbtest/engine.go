package lbtest

import (
	"context"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/fabric/lb"
	"github.com/labctl/labctl/inventory"
)

// Topology is the fabric of a generated lab (inventory.Generate's spec),
// each link changed by edit (nil: none), and the lab.
func Topology(t testing.TB, spec string, edit func(*inventory.Link)) (*fabric.Topology, *inventory.Lab) {
	t.Helper()
	lab, err := inventory.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range lab.Links {
		if edit != nil {
			edit(&lab.Links[i])
		}
	}
	topo, err := fabric.NewTopology(lab)
	if err != nil {
		t.Fatal(err)
	}
	return topo, lab
}

// Outcome is what a run left in the engine's counters.
type Outcome struct {
	OOO, Retx, Drops, TxBytes uint64 // summed over every port
	RQ                        fabric.ReorderStats
	Host                      fabric.HostStats // what host modules did
	Ports                     map[fabric.PortKey]*fabric.PortCounters
	Results                   []fabric.Result
	FCTs                      []int64 // ns, by result
	Last                      int64   // ns: the longest flow completion time
}

// Run runs flows on a fresh engine with m on every switch but those
// others names (each with its own module). A flow that fails, or a
// reorder queue still in use afterwards, fails the test.
func Run(t testing.TB, topo *fabric.Topology, cfg fabric.Config, m lb.Module, others map[string]lb.Module, fs []fabric.Flow) Outcome {
	t.Helper()
	e, err := fabric.NewPacketEngineLB(topo, cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	for sw, o := range others {
		if err := e.SetSwitchLB(sw, o); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.Run(context.Background(), fs, fabric.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := Outcome{RQ: e.ReorderStats(), Host: e.HostStats(), Ports: e.Counters().Ports, Results: res}
	for _, r := range res {
		if r.Err != "" {
			t.Fatalf("flow %d: %s", r.ID, r.Err)
		}
		o.FCTs = append(o.FCTs, r.End-r.Start)
		o.Last = max(o.Last, r.End-r.Start)
	}
	for _, p := range o.Ports {
		o.OOO += p.OutOfSequence
		o.Retx += p.Retransmits
		o.Drops += p.Drops
		o.TxBytes += p.TxBytes
	}
	if o.RQ.InUse != 0 {
		t.Errorf("%d reorder queues still in use after the run", o.RQ.InUse)
	}
	return o
}

// New is a module of the scheme that register adds, by name, with some
// parameters changed, as its concrete type T.
func New[T lb.Module](t testing.TB, register func(*lb.Registry) error, name string, params map[string]string) T {
	t.Helper()
	r := lb.NewRegistry()
	if err := register(r); err != nil {
		t.Fatal(err)
	}
	m, err := r.New(name, params)
	if err != nil {
		t.Fatal(err)
	}
	return m.(T)
}

// CheckParams checks the parameters of the scheme that register adds, by
// name: each of good, "name=value,..." ("": the defaults), passes the
// registry's Check and each of bad fails it; every parameter has help and
// a default. It returns the registry for a test's further checks.
func CheckParams(t testing.TB, register func(*lb.Registry) error, name string, good, bad []string) *lb.Registry {
	t.Helper()
	r := lb.NewRegistry()
	if err := register(r); err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		kvs []string
		ok  bool
	}{{good, true}, {bad, false}} {
		for _, kvs := range set.kvs {
			if err := r.Check(name, ParseParams(kvs)); (err == nil) != set.ok {
				t.Errorf("%q: %v", kvs, err)
			}
		}
	}
	ps, _ := r.Params(name)
	for _, p := range ps {
		if p.Help == "" || p.Default == "" {
			t.Errorf("%s lacks help or a default", p.Name)
		}
	}
	return r
}
