package openconfig

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/labctl/labctl/drivers/switchqos"
)

// Session is one switch over gNMI for one plan or apply: Read (Get of
// /qos), Stage (one Set: labctl's subtrees replaced by the profile's
// leaves, which the target applies whole or not at all), Check, then
// Confirm (nothing to do) or Cancel (a Set that puts back what Read
// found). gNMI has no confirmed commit: a switch whose labctl dies
// between Stage and Cancel keeps the change.
type Session struct {
	device string
	ports  []string
	dev    Deviation
	conn   *grpc.ClientConn
	c      pb.GNMIClient
	have   Leaves // from the last Read
	saved  Leaves // before Stage: what Cancel restores
	cur    switchqos.Config
}

// Dial opens a session on the gNMI target at addr of switch device,
// running os (its Deviations entry; unknown: held to openconfig/public),
// with the dial options given (TLS, credentials); none: plaintext.
func Dial(device, addr, os string, ports []string, opts ...grpc.DialOption) (*Session, error) {
	dev, ok := Deviations()[os]
	if !ok {
		dev = Deviations()["openconfig"]
	}
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("device %s: gnmi %s: %w", device, addr, err)
	}
	return &Session{device: device, ports: ports, dev: dev, conn: conn, c: pb.NewGNMIClient(conn)}, nil
}

// Read is every port's QoS.
func (s *Session) Read(ctx context.Context) ([]string, map[string]switchqos.Config, error) {
	resp, err := s.c.Get(ctx, &pb.GetRequest{Path: []*pb.Path{{Elem: []*pb.PathElem{{Name: "qos"}}}}, Encoding: pb.Encoding_JSON_IETF})
	if err != nil {
		return nil, nil, fmt.Errorf("device %s: gnmi Get /qos: %w", s.device, err)
	}
	l := Leaves{}
	for _, n := range resp.GetNotification() {
		for _, u := range n.GetUpdate() {
			path := FormatPath(n.GetPrefix(), u.GetPath())
			if j := u.GetVal().GetJsonIetfVal(); j != nil { // a subtree, as most targets answer
				if err := FlattenJSON(l, path, j); err != nil {
					return nil, nil, fmt.Errorf("device %s: %w", s.device, err)
				}
				continue
			}
			v, err := ValueText(u.GetVal())
			if err != nil {
				return nil, nil, fmt.Errorf("device %s: %s: %w", s.device, path, err)
			}
			l[path] = v
		}
	}
	out := map[string]switchqos.Config{}
	for _, p := range s.ports {
		if out[p], err = Parse(l, p); err != nil {
			return nil, nil, fmt.Errorf("device %s: %w", s.device, err)
		}
	}
	s.have = l
	if len(s.ports) > 0 {
		s.cur = out[s.ports[0]]
	}
	return s.ports, out, nil
}

// Want is want without what this NOS lacks (Deviations).
func (s *Session) Want(w switchqos.Config) switchqos.Config { return Want(w, s.cur, s.dev) }

// Stage sets the profile in one Set. A refused Set changes nothing.
func (s *Session) Stage(ctx context.Context, want switchqos.Config) (bool, error) {
	if s.have == nil {
		if _, _, err := s.Read(ctx); err != nil {
			return false, err
		}
	}
	req, err := setRequest(s.ports, s.dev, Render(s.ports, Want(want, s.cur, s.dev), s.dev))
	if err != nil {
		return false, fmt.Errorf("device %s: %w", s.device, err)
	}
	s.saved = s.have
	if _, err := s.c.Set(ctx, req); err != nil {
		s.saved = nil
		return false, fmt.Errorf("device %s: gnmi Set: %w", s.device, err)
	}
	return false, nil
}

// setRequest deletes labctl's subtrees and updates leaves in one Set.
func setRequest(ports []string, dev Deviation, leaves Leaves) (*pb.SetRequest, error) {
	req := &pb.SetRequest{}
	for _, m := range Managed(ports, dev) {
		p, err := ParsePath(m)
		if err != nil {
			return nil, err
		}
		req.Delete = append(req.Delete, p)
	}
	us, err := Updates(leaves)
	req.Update = us
	return req, err
}

// Updates is leaves as gNMI updates with typed values, in path order.
func Updates(leaves Leaves) ([]*pb.Update, error) {
	var out []*pb.Update
	for _, path := range slices.Sorted(maps.Keys(leaves)) {
		p, err := ParsePath(path)
		if err != nil {
			return nil, err
		}
		out = append(out, &pb.Update{Path: p, Val: typed(path, leaves[path])})
	}
	return out, nil
}

// typed is a leaf's value as its YANG type wants it: thresholds and
// weights unsigned, enables boolean, names strings.
func typed(path, v string) *pb.TypedValue {
	leaf := path[strings.LastIndexByte(path, '/')+1:]
	switch leaf {
	case "enable-ecn", "enable":
		return &pb.TypedValue{Value: &pb.TypedValue_BoolVal{BoolVal: v == "true"}}
	case "min-threshold", "max-threshold", "max-drop-probability-percent", "weight", "static-shared-buffer-limit", "dedicated-buffer", "dscp":
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			return &pb.TypedValue{Value: &pb.TypedValue_UintVal{UintVal: n}}
		}
	case "dynamic-limit-scaling-factor":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return &pb.TypedValue{Value: &pb.TypedValue_IntVal{IntVal: n}}
		}
	}
	return &pb.TypedValue{Value: &pb.TypedValue_StringVal{StringVal: v}}
}

// ValueText is a scalar leaf value as text.
func ValueText(v *pb.TypedValue) (string, error) {
	switch x := v.GetValue().(type) {
	case *pb.TypedValue_StringVal:
		return x.StringVal, nil
	case *pb.TypedValue_UintVal:
		return strconv.FormatUint(x.UintVal, 10), nil
	case *pb.TypedValue_IntVal:
		return strconv.FormatInt(x.IntVal, 10), nil
	case *pb.TypedValue_BoolVal:
		return strconv.FormatBool(x.BoolVal), nil
	}
	return "", fmt.Errorf("value %v: want a scalar leaf", v)
}

// Check reads the switch back: nil if every port holds want.
func (s *Session) Check(ctx context.Context, want switchqos.Config) error {
	ports, have, err := s.Read(ctx)
	if err != nil {
		return err
	}
	if d := switchqos.MergePorts(ports, have, want); len(d) > 0 {
		return fmt.Errorf("device %s: read-back: %d settings differ, first %s = %s (want %s)", s.device, len(d), d[0].Field, d[0].From, d[0].To)
	}
	return nil
}

// Confirm has nothing to do: a Set is in place once answered.
func (s *Session) Confirm(context.Context) error { s.saved = nil; return nil }

// Cancel puts back the leaves Read found before Stage.
func (s *Session) Cancel(ctx context.Context) error {
	if s.saved == nil {
		return nil
	}
	req, err := setRequest(s.ports, s.dev, onlyManaged(s.saved, s.ports, s.dev))
	if err != nil {
		return err
	}
	if _, err := s.c.Set(ctx, req); err != nil {
		return fmt.Errorf("device %s: gnmi Set (rollback): %w", s.device, err)
	}
	s.saved = nil
	return nil
}

// onlyManaged is the leaves of l under Managed subtrees, with the queues
// and forwarding groups Render always writes.
func onlyManaged(l Leaves, ports []string, dev Deviation) Leaves {
	out := Leaves{}
	for k, v := range l {
		for _, m := range Managed(ports, dev) {
			if k == m || strings.HasPrefix(k, m+"/") {
				out[k] = v
			}
		}
		if strings.HasPrefix(k, "/qos/queues/") || strings.HasPrefix(k, "/qos/forwarding-groups/") {
			out[k] = v
		}
	}
	return out
}

// Close ends the connection.
func (s *Session) Close() error { return s.conn.Close() }
