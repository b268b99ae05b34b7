package collectors

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/labctl/labctl/inventory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// GNMISecurity is how a collector reaches its targets: TLS verified
// against CAFile by default, and a username and password sent as call
// metadata when Username is set.
type GNMISecurity struct {
	// CAFile is the PEM file of the CA that signed the targets'
	// certificates; "" trusts the system's roots.
	CAFile string
	// SkipVerify accepts any server certificate (logged as a warning on
	// every run): the connection is encrypted but not authenticated.
	SkipVerify bool
	// Plaintext speaks gRPC without TLS; only when asked for.
	Plaintext bool
	// ServerName is the name the server certificate must carry, when it
	// is not the host dialled (a switch's gnmi_tls.server_name).
	ServerName string
	// Username and Password go with every call as the "username" and
	// "password" metadata. The password is never logged.
	Username, Password string
}

// DialOptions are the gRPC options of s for device's target; it logs a
// warning when the server certificate goes unverified.
func (s GNMISecurity) DialOptions(device string, log *slog.Logger) ([]grpc.DialOption, error) {
	var opts []grpc.DialOption
	switch {
	case s.Plaintext && (s.CAFile != "" || s.SkipVerify):
		return nil, fmt.Errorf("switch %s: gnmi: plaintext asked for with a TLS option", device)
	case s.Plaintext:
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	default:
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName}
		if s.SkipVerify {
			log.Warn("gnmi server certificate NOT verified (--tls-skip-verify): the connection is encrypted but anyone can pose as the switch", "device", device)
			cfg.InsecureSkipVerify = true
		} else if s.CAFile != "" {
			pool, err := loadCA(s.CAFile)
			if err != nil {
				return nil, fmt.Errorf("switch %s: gnmi: %w", device, err)
			}
			cfg.RootCAs = pool
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	}
	if s.Username != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(password{user: s.Username, pass: s.Password, tls: !s.Plaintext}))
	}
	return opts, nil
}

func loadCA(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tls ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls ca %s: no PEM certificate in it", file)
	}
	return pool, nil
}

// password sends a username and password with each call.
type password struct {
	user, pass string
	tls        bool
}

func (p password) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"username": p.user, "password": p.pass}, nil
}

// RequireTransportSecurity: with TLS, gRPC refuses to send the password
// over a connection that lost it; over plaintext (asked for) it goes as is.
func (p password) RequireTransportSecurity() bool { return p.tls }

// ReadSecret is a secret from the environment variable env, or else from
// file (its first line, without the newline): a password is never taken
// from a lab file or a flag's literal value.
func ReadSecret(env, file string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("password file: %w", err)
	}
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b = b[:i]
			break
		}
	}
	if len(b) == 0 {
		return "", errors.New("password file " + file + ": empty")
	}
	return string(b), nil
}

// LabSecurity is what lab's gnmi_tls section asks for (TLS verified
// against the system's roots when it has none): its CA, plaintext, and
// the named credential's user and password (from password_env or
// password_file).
func LabSecurity(lab *inventory.Lab) (GNMISecurity, error) {
	return sectionSecurity(lab, lab.GNMITLS)
}

// SwitchSecurity is what reaching sw takes: the lab's gnmi_tls with sw's
// own laid over it (inventory.Lab.SwitchGNMITLS).
func SwitchSecurity(lab *inventory.Lab, sw *inventory.Switch) (GNMISecurity, error) {
	s, err := sectionSecurity(lab, lab.SwitchGNMITLS(sw))
	if err != nil {
		return s, fmt.Errorf("switch %s: %w", sw.Name, err)
	}
	return s, nil
}

func sectionSecurity(lab *inventory.Lab, g *inventory.GNMITLS) (GNMISecurity, error) {
	if g == nil {
		return GNMISecurity{}, nil
	}
	s := GNMISecurity{CAFile: g.CA, Plaintext: g.Plaintext, SkipVerify: g.SkipVerify, ServerName: g.ServerName}
	if g.Credential == "" {
		return s, nil
	}
	c, ok := lab.Credentials[g.Credential]
	if !ok {
		return s, fmt.Errorf("lab %s: gnmi_tls.credential %q is not defined", lab.Name, g.Credential)
	}
	pass, err := ReadSecret(c.PasswordEnv, c.PasswordFile)
	if err != nil {
		return s, fmt.Errorf("lab %s: gnmi credential %s: %w", lab.Name, g.Credential, err)
	}
	s.Username, s.Password = c.User, pass
	return s, nil
}

// Over is s with what o sets taken over: the command line's --tls-ca,
// --tls-skip-verify, --gnmi-plaintext and credentials over the lab file's.
func (s GNMISecurity) Over(o GNMISecurity) GNMISecurity {
	if o.CAFile != "" || o.SkipVerify {
		s.CAFile, s.SkipVerify, s.Plaintext = o.CAFile, o.SkipVerify, false
	}
	if o.Plaintext {
		s.CAFile, s.SkipVerify, s.Plaintext, s.ServerName = "", false, true, ""
	}
	if o.Username != "" {
		s.Username, s.Password = o.Username, o.Password
	}
	return s
}
