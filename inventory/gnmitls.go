package inventory

import "fmt"

// GNMITLS is how the switches' gNMI servers are reached: TLS verified
// against CA (or the system's roots when CA is empty) unless Plaintext
// says otherwise, and the credential (by name under credentials: its
// user, and password_env or password_file) sent as call metadata. The
// lab's section applies to every switch; a switch's own gnmi_tls
// overrides it field by field (a switch with its own CA, a certificate
// naming another host than the address reached, a switch that still
// speaks plaintext).
type GNMITLS struct {
	CA         string `yaml:"ca,omitempty" json:"ca,omitempty"`
	Plaintext  bool   `yaml:"plaintext,omitempty" json:"plaintext,omitempty"`
	Credential string `yaml:"credential,omitempty" json:"credential,omitempty"`
	// ServerName is the name the switch's certificate must carry when it
	// is not the address dialled (a switch's section only).
	ServerName string `yaml:"server_name,omitempty" json:"server_name,omitempty"`
	// SkipVerify accepts any certificate from the switch (encrypted but
	// unauthenticated; every run warns): a switch's section only.
	SkipVerify bool `yaml:"skip_verify,omitempty" json:"skip_verify,omitempty"`
}

// SwitchGNMITLS is what reaching sw's gNMI takes: the lab's gnmi_tls
// with sw's own laid over it (nil when neither says anything).
func (l *Lab) SwitchGNMITLS(sw *Switch) *GNMITLS {
	if sw.GNMITLS == nil {
		return l.GNMITLS
	}
	var g GNMITLS
	if l.GNMITLS != nil {
		g = *l.GNMITLS
	}
	o := sw.GNMITLS
	switch {
	case o.Plaintext:
		g.CA, g.SkipVerify, g.Plaintext = "", false, true
	case o.CA != "" || o.SkipVerify:
		g.CA, g.SkipVerify, g.Plaintext = o.CA, o.SkipVerify, false
	}
	if o.Credential != "" {
		g.Credential = o.Credential
	}
	if o.ServerName != "" {
		g.ServerName = o.ServerName
	}
	return &g
}

// validateGNMITLS reports the gnmi_tls sections' problems through add:
// the lab's, then each switch's.
func (l *Lab) validateGNMITLS(add func(path, format string, args ...any)) {
	if g := l.GNMITLS; g != nil {
		l.validateTLSSection("gnmi_tls", g, add)
		if g.ServerName != "" {
			add("gnmi_tls.server_name", "a server name belongs to one switch: set it in that switch's gnmi_tls")
		}
		if g.SkipVerify {
			add("gnmi_tls.skip_verify", "skip_verify belongs to one switch's gnmi_tls (for the whole lab: --tls-skip-verify)")
		}
	}
	for i := range l.Switches {
		if g := l.Switches[i].GNMITLS; g != nil {
			l.validateTLSSection(fmt.Sprintf("switches[%d].gnmi_tls", i), g, add)
		}
	}
}

func (l *Lab) validateTLSSection(at string, g *GNMITLS, add func(path, format string, args ...any)) {
	if bad := badPath(g.CA); bad != "" {
		add(at+".ca", "%s", bad)
	}
	if g.Plaintext && (g.CA != "" || g.SkipVerify || g.ServerName != "") {
		add(at+".plaintext", "plaintext excludes ca, skip_verify and server_name")
	}
	if g.SkipVerify && g.CA != "" {
		add(at+".skip_verify", "skip_verify and a CA exclude each other")
	}
	if g.Credential == "" {
		return
	}
	c, ok := l.Credentials[g.Credential]
	switch {
	case !ok:
		add(at+".credential", "credential %q is not defined under credentials", g.Credential)
	case c.PasswordEnv == "" && c.PasswordFile == "":
		add(at+".credential", "credential %q has no password_env or password_file (gNMI sends a username and password)", g.Credential)
	}
}
