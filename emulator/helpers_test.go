package emulator

import (
	"bytes"
	"testing"

	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/sshd"
	"github.com/labctl/labctl/inventory"
)

type fakeSession struct{ out, err bytes.Buffer }

func (f *fakeSession) session() *sshd.Session { return &sshd.Session{Stdout: &f.out, Stderr: &f.err} }

func mustLab(t testing.TB) *inventory.Lab {
	lab, err := inventory.Generate("leafspine:1x1:2@100")
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

func mustTopo(t *testing.T) *fabric.Topology {
	topo, err := fabric.NewTopology(mustLab(t))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}
