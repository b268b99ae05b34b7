package inventory

import (
	"fmt"
	"regexp"
	"strings"
)

// Strings of a lab file end up in remote shell commands (RNIC and netdev
// names in mlnx_qos, ethtool and sysfs paths), in gNMI paths and in file
// names under run and state directories. Each kind is held to a strict
// character set when the lab is loaded, so that nothing later has to guess
// whether a name is safe: quoting where a name is used stays a second line
// of defence, not the only one.
var (
	// a host or switch name, also a directory name
	deviceName = nameRule{"device name", regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$`), "letters, digits, _ . - (up to 63, no leading . or -)"}
	// an RNIC device (mlx5_0) or a netdev (ens1f0np0)
	ifName = nameRule{"interface name", regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$`), "letters, digits, _ . - (up to 32)"}
	// a switch port: vendors write "Ethernet1/1" or "1/1/1"
	portName = nameRule{"port name", regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./:-]{0,63}$`), "letters, digits, _ . / : - (up to 64)"}
	// a switch's os: or model: ("sonic", "Wedge100BF-32X", "7060CX-32S")
	osName = nameRule{"os or model name", regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$`), "letters, digits, _ . + - (up to 64)"}
	// a POSIX login name
	userName = nameRule{"user name", regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,31}$`), "a login name: letters, digits, _ . -"}
	// an environment variable a secret is read from
	envName = nameRule{"environment variable name", regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`), "letters, digits and _"}
)

type nameRule struct {
	kind string
	re   *regexp.Regexp
	want string
}

// check says what is wrong with name, or "" (an empty name is the
// caller's "required" check, not this one's).
func (r nameRule) check(name string) string {
	if name == "" || r.re.MatchString(name) && !strings.Contains(name, "..") {
		return ""
	}
	if len(name) > 40 {
		name = name[:40] + "..."
	}
	return fmt.Sprintf("unsafe %s %q: want %s", r.kind, name, r.want)
}

// badPath says what is wrong with a local file path of the lab (key files,
// known_hosts): control characters never belong in one.
func badPath(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Sprintf("unsafe path %q: control characters (newline, NUL ...) are not allowed", p)
	}
	return ""
}
