package inventory

// GNMITLS is how the switches' gNMI servers are reached: TLS verified
// against CA (or the system's roots when CA is empty) unless Plaintext
// says otherwise, and the credential (by name under credentials: its
// user, and password_env or password_file) sent as call metadata.
type GNMITLS struct {
	CA         string `yaml:"ca,omitempty" json:"ca,omitempty"`
	Plaintext  bool   `yaml:"plaintext,omitempty" json:"plaintext,omitempty"`
	Credential string `yaml:"credential,omitempty" json:"credential,omitempty"`
}

// validateGNMITLS reports the gnmi_tls section's problems through add.
func (l *Lab) validateGNMITLS(add func(path, format string, args ...any)) {
	g := l.GNMITLS
	if g == nil {
		return
	}
	if bad := badPath(g.CA); bad != "" {
		add("gnmi_tls.ca", "%s", bad)
	}
	if g.Plaintext && g.CA != "" {
		add("gnmi_tls.plaintext", "plaintext and a CA exclude each other")
	}
	if g.Credential == "" {
		return
	}
	c, ok := l.Credentials[g.Credential]
	switch {
	case !ok:
		add("gnmi_tls.credential", "credential %q is not defined under credentials", g.Credential)
	case c.PasswordEnv == "" && c.PasswordFile == "":
		add("gnmi_tls.credential", "credential %q has no password_env or password_file (gNMI sends a username and password)", g.Credential)
	}
}
