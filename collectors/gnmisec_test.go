package collectors_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/labctl/labctl/collectors"
	"github.com/labctl/labctl/emulator/fabric"
	"github.com/labctl/labctl/emulator/gnmitarget"
	"github.com/labctl/labctl/inventory"
)

// secureTarget serves an emulated switch's gNMI with TLS from a fresh CA
// (its PEM file returned) and, when user is set, a username and password.
func secureTarget(t *testing.T, user, pass string) (*gnmitarget.Target, string, string) {
	t.Helper()
	dir := t.TempDir()
	ca, err := gnmitarget.NewCA(dir, "lab")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ca.ServerTLS("leaf1")
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := gnmitarget.New("leaf1", nil)
	if err != nil {
		t.Fatal(err)
	}
	tgt.Secure(gnmitarget.Security{TLS: cfg, Username: user, Password: pass})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go tgt.Serve(ctx, lis)
	return tgt, lis.Addr().String(), ca.File
}

// capabilities is one Capabilities call over the dial options of sec.
func capabilities(t *testing.T, addr string, sec collectors.GNMISecurity, log *slog.Logger) error {
	t.Helper()
	opts, err := sec.DialOptions("leaf1", log)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = pb.NewGNMIClient(conn).Capabilities(ctx, &pb.CapabilityRequest{})
	return err
}

// The collector verifies the server certificate against the CA it is
// given: another lab's CA, or the system roots, fail the handshake; the
// right CA passes; skip-verify passes with a warning; plaintext to a TLS
// server fails.
func TestGNMITLSVerifiesTheServer(t *testing.T) {
	t.Parallel()
	_, addr, caFile := secureTarget(t, "", "")
	other, err := gnmitarget.NewCA(t.TempDir(), "other")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	for _, tc := range []struct {
		name string
		sec  collectors.GNMISecurity
		ok   bool
	}{
		{"right CA", collectors.GNMISecurity{CAFile: caFile}, true},
		{"wrong CA", collectors.GNMISecurity{CAFile: other.File}, false},
		{"system roots", collectors.GNMISecurity{}, false},
		{"plaintext to TLS", collectors.GNMISecurity{Plaintext: true}, false},
	} {
		err := capabilities(t, addr, tc.sec, quiet)
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if !tc.ok && (err == nil || status.Code(err) != codes.Unavailable) {
			t.Errorf("%s: want the handshake refused (Unavailable), got %v", tc.name, err)
		}
		if !tc.ok && err != nil && tc.sec.CAFile != "" && !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: the refusal does not name the certificate: %v", tc.name, err)
		}
	}
	var logged bytes.Buffer
	if err := capabilities(t, addr, collectors.GNMISecurity{SkipVerify: true}, slog.New(slog.NewTextHandler(&logged, nil))); err != nil {
		t.Errorf("skip-verify: %v", err)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "NOT verified") {
		t.Errorf("skip-verify must warn, logged %q", logged.String())
	}
}

// A target that asks for credentials refuses a call without them or with
// a wrong password (Unauthenticated) and takes the right ones, read from
// a file; the password is never logged.
func TestGNMIAuth(t *testing.T) {
	t.Parallel()
	_, addr, caFile := secureTarget(t, "admin", "s3cret-pw")
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pw, err := collectors.ReadSecret("LABCTL_TEST_UNSET_GNMI_PW", pwFile)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	for _, tc := range []struct {
		name, user, pass string
		want             codes.Code
	}{
		{"none", "", "", codes.Unauthenticated},
		{"wrong password", "admin", "nope", codes.Unauthenticated},
		{"wrong user", "root", pw, codes.Unauthenticated},
		{"right", "admin", pw, codes.OK},
	} {
		err := capabilities(t, addr, collectors.GNMISecurity{CAFile: caFile, Username: tc.user, Password: tc.pass}, log)
		if status.Code(err) != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), pw) {
			t.Errorf("%s: the error echoes the password", tc.name)
		}
	}
	if strings.Contains(logged.String(), pw) {
		t.Error("the password was logged")
	}
}

// A secret comes from the environment first, else the file's first line.
func TestReadSecret(t *testing.T) {
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("from-file\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := collectors.ReadSecret("LABCTL_TEST_GNMI_PW", pwFile); got != "from-file" || err != nil {
		t.Errorf("file: %q %v", got, err)
	}
	t.Setenv("LABCTL_TEST_GNMI_PW", "from-env")
	if got, _ := collectors.ReadSecret("LABCTL_TEST_GNMI_PW", pwFile); got != "from-env" {
		t.Errorf("the environment comes before the file: %q", got)
	}
}

// Collect streams over TLS with credentials: published counters arrive.
func TestCollectOverTLS(t *testing.T) {
	t.Parallel()
	tgt, addr, caFile := secureTarget(t, "admin", "pw")
	sink := &memSink{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		collectors.Collect(ctx, collectors.GNMITarget{Device: "leaf1", Addr: addr},
			collectors.GNMIOptions{Interval: 100 * time.Microsecond, Paths: []string{"COUNTERS_DB:/COUNTERS/*"},
				Security: collectors.GNMISecurity{CAFile: caFile, Username: "admin", Password: "pw"}}, sink)
	})
	defer func() { cancel(); wg.Wait() }()
	waitFor(t, "the subscription", func() bool { return tgt.SampleInterval() != 0 })
	t0 := time.Unix(1700000000, 0)
	deadline := time.Now().Add(10 * time.Second)
	for i := 1; len(sink.find("port", func(collectors.Point) bool { return true })) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatal("no sample over TLS")
		}
		tgt.Publish(t0.Add(time.Duration(i)*time.Millisecond), map[string]*fabric.PortCounters{"1/0": {}})
		time.Sleep(10 * time.Millisecond)
	}
}

// A switch's own gnmi_tls decides how it is reached: its CA over the
// lab's (another lab's CA fails the switch without one), and its server
// name is what the certificate must carry (the emulated target's names
// leaf1: leaf1 passes, a switch expecting leaf2 is refused).
func TestSwitchSecurityOverridesTheLab(t *testing.T) {
	t.Parallel()
	_, addr, caFile := secureTarget(t, "", "")
	other, err := gnmitarget.NewCA(t.TempDir(), "other")
	if err != nil {
		t.Fatal(err)
	}
	lab := &inventory.Lab{Name: "x", GNMITLS: &inventory.GNMITLS{CA: other.File}, Switches: []inventory.Switch{
		{Name: "own-ca", GNMITLS: &inventory.GNMITLS{CA: caFile}},
		{Name: "lab-ca"},
		{Name: "right-name", GNMITLS: &inventory.GNMITLS{CA: caFile, ServerName: "leaf1"}},
		{Name: "wrong-name", GNMITLS: &inventory.GNMITLS{CA: caFile, ServerName: "leaf2"}},
	}}
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	for i, ok := range []bool{true, false, true, false} {
		sw := &lab.Switches[i]
		sec, err := collectors.SwitchSecurity(lab, sw)
		if err != nil {
			t.Fatal(err)
		}
		err = capabilities(t, addr, sec, quiet)
		if ok && err != nil {
			t.Errorf("%s: %v", sw.Name, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "certificate")) {
			t.Errorf("%s: want the certificate refused, got %v", sw.Name, err)
		}
	}
}
