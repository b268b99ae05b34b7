package emulator

import (
	"fmt"

	"github.com/labctl/labctl/drivers/openconfig"
	"github.com/labctl/labctl/drivers/qosdriver"
	"github.com/labctl/labctl/drivers/switchqos"
	"github.com/labctl/labctl/emulator/gnmitarget"
	"github.com/labctl/labctl/inventory"
)

// serveOpenConfig makes a switch whose lab entry picks the openconfig
// driver answer gNMI Get and Set on openconfig-qos (gnmitarget/qos.go),
// starting at the twin's default QoS as its os's deviations let it hold
// it. A Set whose result a switch profile could not hold is refused
// whole; one it accepts becomes the switch's part of the twin.
func (l *Lab) serveOpenConfig(tgt *gnmitarget.Target, sw inventory.Switch) error {
	ports := sw.PortNames()
	dev, ok := openconfig.Deviations()[sw.OS]
	if !ok {
		dev = openconfig.Deviations()["openconfig"]
	}
	init, err := openconfig.Updates(openconfig.Render(ports, defaultQoS(1), dev))
	if err != nil {
		return fmt.Errorf("device %s: openconfig: %w", sw.Name, err)
	}
	parse := func(leaves map[string]string) (switchqos.Config, error) {
		var first switchqos.Config
		for i, p := range ports {
			q, err := openconfig.Parse(leaves, p)
			if err != nil {
				return q, err
			}
			if ps := q.Check(switchBufferBytes()); len(ps) > 0 {
				return q, fmt.Errorf("port %s: %s", p, ps[0])
			}
			if i == 0 {
				first = q
			}
		}
		return first, nil
	}
	tgt.ServeQoS(init, gnmitarget.QoSModel{Key: openconfig.FormatPath, Value: openconfig.ValueText,
		JSON:  func(path string, leaves map[string]string) ([]byte, error) { return openconfig.JSONIETF(leaves, path) },
		Check: func(leaves map[string]string) error { _, err := parse(leaves); return err },
		On: func(leaves map[string]string) {
			if !l.twinFollows(sw.Name, qosdriver.OpenConfig) {
				return
			}
			q, _ := parse(leaves)
			if dev.PFC || dev.Buffer { // what the NOS lacks keeps the twin's default
				d := defaultQoS(1)
				q.PFC, q.XoffBytes, q.XonBytes, q.Alpha, q.HeadroomBytes = d.PFC, d.XoffBytes, d.XonBytes, d.Alpha, d.HeadroomBytes
			}
			if dev.XON {
				q.XonBytes = defaultQoS(1).XonBytes
			}
			if err := l.twin.configure(sw.Name, q); err != nil {
				l.log.Warn("twin: cannot apply the gNMI QoS", "device", sw.Name, "err", err)
			}
		}})
	return nil
}
