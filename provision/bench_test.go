package provision_test

import (
	"context"
	"fmt"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

// BenchmarkProvisionLab: plan, apply and verify of a full switch profile
// and an RNIC profile together, over real NETCONF and SSH/SFTP to an
// emulated lab of 8 switches (half NETCONF, half SDE shell) and 64 or 256
// hosts (every eighth with the upstream driver): provision.Apply, which
// plans, applies and reads everything back (the verify). Each round
// changes one ECN threshold on every switch and the RoCE ToS on every
// host, so every round applies something.
func BenchmarkProvisionLab(b *testing.B) {
	for _, spec := range []string{"leafspine:4x4:16@100", "leafspine:4x4:64@100"} {
		src, err := inventory.Generate(spec)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("8sw-%dh", len(src.Hosts)), func(b *testing.B) {
			var inbox []string
			for i := 8; i <= len(src.Hosts); i += 8 {
				inbox = append(inbox, fmt.Sprintf("h%d", i))
			}
			inv, pool, _ := emulatedWith(b, spec, sdeEvery(2, 1), emulator.Options{InboxDriverHosts: inbox}, sshdrv.Config{})
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rn := rnicProfile(104 + i%2*2)
				rn.CNPDSCP = new(int)
				*rn.CNPDSCP = 46
				in := provision.Intent{Switch: fullProfile(100000 + int64(i%2)*50000), RNIC: rn, Atomic: true}
				rep, err := provision.Apply(ctx, pool, inv, in, nil)
				if err != nil || len(rep.Plan.Switches) == 0 || len(rep.Plan.RNICs) == 0 || rep.Drift.Len() != 0 {
					b.Fatalf("%v: plan %d switch changes, drift %d", err, len(rep.Plan.Switches), rep.Drift.Len())
				}
			}
		})
	}
}
