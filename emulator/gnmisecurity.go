package emulator

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/emulator/gnmitarget"
	"github.com/labctl/labctl/inventory"
)

// gnmiCredential names the generated gNMI credential in the lab file.
const gnmiCredential = "gnmi"

// gnmiSecurity sets up what the lab's gNMI targets ask of clients and
// records it in inv (gnmi_tls): by default TLS with certificates from a
// CA generated into keys (its PEM file is what collectors trust); with
// auth, a generated password (keys/gnmi-password, 0600) every call must
// carry. It returns the Security of each switch by name.
func gnmiSecurity(opt Options, keys string, inv *inventory.Lab) (func(name string) (gnmitarget.Security, error), error) {
	var base gnmitarget.Security
	if opt.GNMIAuth {
		pw, err := newPassword(filepath.Join(keys, "gnmi-password"))
		if err != nil {
			return nil, fmt.Errorf("emulator: gnmi password: %w", err)
		}
		base.Username, base.Password = ClientUser, pw
		inv.Credentials[gnmiCredential] = inventory.Credential{User: ClientUser, PasswordFile: filepath.Join(keys, "gnmi-password")}
	}
	inv.GNMITLS = &inventory.GNMITLS{Plaintext: opt.GNMIPlaintext}
	if base.Username != "" {
		inv.GNMITLS.Credential = gnmiCredential
	}
	if opt.GNMIPlaintext {
		return func(string) (gnmitarget.Security, error) { return base, nil }, nil
	}
	ca, err := gnmitarget.NewCA(keys, inv.Name)
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	inv.GNMITLS.CA = ca.File
	return func(name string) (gnmitarget.Security, error) {
		s := base
		var err error
		s.TLS, err = ca.ServerTLS(name)
		return s, err
	}, nil
}

// newPassword writes a random password to file (0600) and returns it.
func newPassword(file string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(b)
	if err := os.WriteFile(file, []byte(pw+"\n"), 0o600); err != nil {
		return "", err
	}
	return pw, nil
}
