package inventory

import (
	"strings"
	"testing"
)

// The gnmi_tls section's problems are reported at their file:line.
func TestGNMITLSValidation(t *testing.T) {
	t.Parallel()
	doc := "name: x\n" +
		"credentials:\n" +
		"  gn: {user: admin, key_file: /k}\n" +
		"gnmi_tls:\n" +
		"  ca: /etc/labctl/ca.pem\n" +
		"  plaintext: true\n" +
		"  credential: gn\n"
	lab, err := Parse([]byte(doc), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = lab.Validate()
	for _, want := range []string{
		"f.yaml:6: gnmi_tls.plaintext: plaintext and a CA exclude each other",
		`f.yaml:7: gnmi_tls.credential: credential "gn" has no password_env or password_file`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	ok := "name: x\ncredentials:\n  gn: {user: admin, password_env: GNMI_PW}\ngnmi_tls: {ca: /etc/labctl/ca.pem, credential: gn}\n"
	lab, err = Parse([]byte(ok), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.Validate(); err != nil && strings.Contains(err.Error(), "gnmi_tls") {
		t.Errorf("a good gnmi_tls section: %v", err)
	}
	if lab.GNMITLS.CA != "/etc/labctl/ca.pem" || lab.GNMITLS.Credential != "gn" {
		t.Errorf("parsed %+v", lab.GNMITLS)
	}
}
