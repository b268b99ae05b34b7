package emulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/labctl/labctl/inventory"
)

// gnmiTLS dials the lab's gNMI with TLS trusting the CA its lab file names.
func gnmiTLS(t *testing.T, inv *inventory.Lab) grpc.DialOption {
	t.Helper()
	if inv.GNMITLS == nil || inv.GNMITLS.CA == "" {
		t.Fatalf("the lab file records no gnmi_tls.ca: %+v", inv.GNMITLS)
	}
	pem, err := os.ReadFile(inv.GNMITLS.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no certificate in the CA file")
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool}))
}

// The emulated lab serves gNMI over TLS with its CA by default, and with
// GNMIAuth asks for the generated password, which stays in a 0600 file
// the lab file names and never in the lab file itself.
func TestLabGNMIServesTLSAndAuth(t *testing.T) {
	t.Parallel()
	src, _ := inventory.Generate("leafspine:1x1:1@100")
	dir := t.TempDir()
	l, err := Start(context.Background(), src, Options{Dir: dir, Engine: "flow", GNMIAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	inv := l.Inventory()
	leaf1, _ := inv.Switch("leaf1")
	cred := inv.Credentials[inv.GNMITLS.Credential]
	fi, err := os.Stat(cred.PasswordFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file %s: %v %v", cred.PasswordFile, fi, err)
	}
	pw, _ := os.ReadFile(cred.PasswordFile)
	labFile := dir + "/lab.yaml"
	if err := inventory.WriteFile(labFile, inv); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(labFile)
	if strings.Contains(string(written), strings.TrimSpace(string(pw))) || !strings.Contains(string(written), "gnmi_tls:") {
		t.Fatalf("the lab file holds the gNMI password or no gnmi_tls:\n%s", written)
	}
	conn, err := grpc.NewClient(leaf1.Mgmt.GNMI, gnmiTLS(t, inv))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewGNMIClient(conn)
	call := func(user, pass string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if user != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "username", user, "password", pass)
		}
		_, err := c.Capabilities(ctx, &pb.CapabilityRequest{})
		return err
	}
	if err := call("", ""); status.Code(err) != codes.Unauthenticated {
		t.Errorf("no credentials: %v", err)
	}
	if err := call(cred.User, "wrong"); status.Code(err) != codes.Unauthenticated {
		t.Errorf("wrong password: %v", err)
	}
	if err := call(cred.User, strings.TrimSpace(string(pw))); err != nil {
		t.Errorf("right credentials over TLS: %v", err)
	}
}
