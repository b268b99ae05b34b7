package provision_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/provision"
)

// BenchmarkProvisionLab: plan, apply and verify of a full switch profile
// and an RNIC profile together, over real NETCONF and SSH/SFTP to an
// emulated lab of 8 switches (half NETCONF, half SDE shell) and 64 or 256
// hosts (every eighth with the upstream driver). Each round changes one
// ECN threshold on every switch and the RoCE ToS on every host, so every
// round applies something.
func BenchmarkProvisionLab(b *testing.B) {
	for _, spec := range []string{"leafspine:4x4:16@100", "leafspine:4x4:64@100"} {
		src, _ := inventory.Generate(spec)
		b.Run(fmt.Sprintf("8sw-%dh", len(src.Hosts)), func(b *testing.B) {
			var inbox []string
			for i := 8; i <= len(src.Hosts); i += 8 {
				inbox = append(inbox, fmt.Sprintf("h%d", i))
			}
			inv, pool, _ := emulatedWith(b, spec, func(lab *inventory.Lab) {
				for i := range lab.Switches {
					if i%2 == 1 {
						lab.Switches[i].QoSDriver = "sde"
					}
				}
			}, emulator.Options{InboxDriverHosts: inbox})
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sw := fullProfile(100000 + int64(i%2)*50000)
				rn := profile(104 + i%2*2)
				rn.CNPDSCP = new(int)
				*rn.CNPDSCP = 46
				if err := planApplyVerify(ctx, inv, pool, sw, rn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func planApplyVerify(ctx context.Context, inv *inventory.Lab, pool *sshdrv.Pool, sw *provision.QoSProfile, rn *connectx.Profile) error {
	if _, err := provision.PlanSwitches(ctx, pool, inv, sw, nil); err != nil {
		return err
	}
	plan, err := provision.PlanRNIC(ctx, pool, inv, rn, nil)
	if err != nil {
		return err
	}
	if _, err := provision.ApplySwitches(ctx, pool, inv, sw, true, nil); err != nil {
		return err
	}
	if _, err := provision.ApplyRNIC(ctx, pool, inv, plan, nil); err != nil {
		return err
	}
	if d, err := provision.PlanSwitches(ctx, pool, inv, sw, nil); err != nil || len(d) > 0 {
		return fmt.Errorf("switches after apply: %v %+v", err, d)
	}
	_, err = provision.VerifyRNIC(ctx, pool, inv, rn, nil)
	return err
}
