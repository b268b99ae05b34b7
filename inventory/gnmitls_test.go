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
		"f.yaml:6: gnmi_tls.plaintext: plaintext excludes ca, skip_verify and server_name",
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

// A switch's gnmi_tls is checked like the lab's, at its own path; a
// server name or skip_verify for the whole lab is refused.
func TestSwitchGNMITLSValidation(t *testing.T) {
	t.Parallel()
	doc := "name: x\n" +
		"gnmi_tls: {server_name: leaf1, skip_verify: true}\n" +
		"switches:\n" +
		"  - name: leaf1\n" +
		"    role: leaf\n" +
		"    gnmi_tls: {ca: /ca.pem, skip_verify: true, credential: nope}\n" +
		"  - name: leaf2\n" +
		"    role: leaf\n" +
		"    gnmi_tls: {plaintext: true, server_name: leaf2.lab}\n"
	lab, err := Parse([]byte(doc), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = lab.Validate()
	for _, want := range []string{
		"f.yaml:2: gnmi_tls.server_name: a server name belongs to one switch",
		"f.yaml:2: gnmi_tls.skip_verify: skip_verify belongs to one switch",
		"switches[0].gnmi_tls.skip_verify: skip_verify and a CA exclude each other",
		`switches[0].gnmi_tls.credential: credential "nope" is not defined`,
		"switches[1].gnmi_tls.plaintext: plaintext excludes ca, skip_verify and server_name",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// A switch's section overrides the lab's field by field: its CA or
// skip_verify replace the lab's trust (and plaintext), its plaintext
// replaces TLS, its credential and server name are its own; a switch
// without one has the lab's.
func TestSwitchGNMITLSOverridesTheLab(t *testing.T) {
	t.Parallel()
	labTLS := &GNMITLS{CA: "/lab-ca.pem", Credential: "lab"}
	for _, tc := range []struct {
		name string
		lab  *GNMITLS
		sw   *GNMITLS
		want *GNMITLS
	}{
		{"none", nil, nil, nil},
		{"the lab's", labTLS, nil, labTLS},
		{"own CA", labTLS, &GNMITLS{CA: "/sw-ca.pem"}, &GNMITLS{CA: "/sw-ca.pem", Credential: "lab"}},
		{"skip verify", labTLS, &GNMITLS{SkipVerify: true}, &GNMITLS{SkipVerify: true, Credential: "lab"}},
		{"plaintext", labTLS, &GNMITLS{Plaintext: true}, &GNMITLS{Plaintext: true, Credential: "lab"}},
		{"TLS on a plaintext lab", &GNMITLS{Plaintext: true}, &GNMITLS{CA: "/sw-ca.pem"}, &GNMITLS{CA: "/sw-ca.pem"}},
		{"name and credential", labTLS, &GNMITLS{ServerName: "leaf1.lab", Credential: "sw"}, &GNMITLS{CA: "/lab-ca.pem", Credential: "sw", ServerName: "leaf1.lab"}},
		{"no lab section", nil, &GNMITLS{ServerName: "leaf1.lab"}, &GNMITLS{ServerName: "leaf1.lab"}},
	} {
		lab := &Lab{GNMITLS: tc.lab}
		got := lab.SwitchGNMITLS(&Switch{Name: "leaf1", GNMITLS: tc.sw})
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if labTLS.CA != "/lab-ca.pem" || labTLS.Credential != "lab" {
		t.Errorf("the lab's section changed: %+v", labTLS)
	}
}
