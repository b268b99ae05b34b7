package emulator_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// TestHostSysTreeWrittenOnFirstUse: a lab starts without writing its
// hosts' /sys trees (thousands of files at a hundred hosts), yet every
// way in sees them as if they had always been there: the first SFTP read,
// the first shell command, and a listing of the root.
func TestHostSysTreeWrittenOnFirstUse(t *testing.T) {
	t.Parallel()
	l, inv, pool := testlab.Start(t, "leafspine:1x2:2@100", nil, emulator.Options{Seed: 1}, sshdrv.Config{})
	if len(inv.Hosts) < 3 {
		t.Fatalf("%d hosts, want 3 or more", len(inv.Hosts))
	}
	onDisk := func(host string) bool {
		_, err := os.Lstat(filepath.Join(l.Dir(), "devices", host, "sys"))
		return err == nil
	}
	for _, h := range inv.Hosts {
		if onDisk(h.Name) {
			t.Fatalf("%s: /sys written at the lab's start", h.Name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	target := func(i int) sshdrv.Target { return testlab.Target(t, inv, inv.Hosts[i].Name, sshdrv.EndpointSSH) }
	ecn := connectx.ECNDir(inv.Hosts[0].RNICs[0].Netdev)

	// SFTP first: a file of the tree reads as the driver's default
	b, err := pool.ReadFile(ctx, target(0), ecn+"/roce_np/enable/3")
	if err != nil || string(b) != "1\n" {
		t.Fatalf("%s: SFTP read of %s/roce_np/enable/3: %q %v", inv.Hosts[0].Name, ecn, b, err)
	}
	// a shell command first: the PCI link is there
	ecn1 := connectx.ECNDir(inv.Hosts[1].RNICs[0].Netdev)
	res, err := pool.Exec(ctx, target(1), "readlink /sys/class/net/"+inv.Hosts[1].RNICs[0].Netdev+"/device")
	if err != nil || res.Err() != nil || string(res.Stdout) != "../../../0000:04:00.0\n" {
		t.Fatalf("%s: readlink of the PCI link: %+v %v", inv.Hosts[1].Name, res, err)
	}
	if res, err := pool.Exec(ctx, target(1), "test -f "+ecn1+"/roce_rp/rpg_time_reset"); err != nil || res.Err() != nil {
		t.Fatalf("%s: test -f %s/roce_rp/rpg_time_reset: %v %v", inv.Hosts[1].Name, ecn1, err, res)
	}
	// a listing of the root shows sys
	cfg, closer, err := pool.ClientConfig(target(2))
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	conn, err := ssh.Dial("tcp", inv.Hosts[2].Mgmt.SSH, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sc, err := sftp.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	fis, err := sc.ReadDir("/")
	if err != nil || !slices.ContainsFunc(fis, func(fi os.FileInfo) bool { return fi.Name() == "sys" && fi.IsDir() }) {
		t.Fatalf("%s: the root's listing has no sys directory: %v", inv.Hosts[2].Name, err)
	}
	for i := range 3 {
		if !onDisk(inv.Hosts[i].Name) {
			t.Errorf("%s: /sys still not on disk after its first use", inv.Hosts[i].Name)
		}
	}
}
