package perftest

import (
	"errors"
	"fmt"
)

// IncastParams: N senders to one receiver, all at once.
type IncastParams struct {
	Senders  []Endpoint
	Receiver Endpoint
	Bytes    int64 // per sender
	MsgSize  int64
	QPs      int
	Tool     string
	BasePort int
	Group    string
}

// Incast builds one flow per sender, all at offset 0, each on its own port
// of the receiver (see portFor).
func Incast(p IncastParams) ([]Flow, error) {
	if len(p.Senders) == 0 {
		return nil, errors.New("incast: no senders")
	}
	if err := checkCommon(p.Tool, p.Bytes, p.MsgSize); err != nil {
		return nil, fmt.Errorf("incast: %w", err)
	}
	ports, err := newPorts(p.BasePort)
	if err != nil {
		return nil, fmt.Errorf("incast: %w", err)
	}
	flows := make([]Flow, 0, len(p.Senders))
	for i, s := range p.Senders {
		if s.Host == p.Receiver.Host {
			return nil, fmt.Errorf("incast: sender %s is also the receiver", s.Host)
		}
		flows = append(flows, flow(i, s, p.Receiver, p.Tool, p.Bytes, p.MsgSize, p.QPs, ports.of(p.Receiver.Host), p.Group, 0))
	}
	return flows, nil
}
