package emulator

import "github.com/labctl/labctl/emulator/sshd"

// SSHUse says what device's SSH server has served since the lab started
// (connections, command sessions, subsystem sessions such as SFTP
// transfers), and false when the device has no SSH server: tests count
// what a run costs each host.
func (l *Lab) SSHUse(device string) (sshd.Use, bool) {
	for _, s := range l.servers {
		if s.Name() == device {
			return s.Use(), true
		}
	}
	return sshd.Use{}, false
}
