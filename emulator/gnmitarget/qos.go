package gnmitarget

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	pb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// qosStore is the switch's QoS configuration as gNMI Get and Set see
// it: leaves by path. A switch serves it only after ServeQoS (its lab
// entry picks the openconfig driver); before, Get and Set are
// unimplemented, as on a target without the model.
type qosStore struct {
	mu     sync.Mutex
	leaves map[string]*pb.Update // by QoSModel.Key, paths in full
	m      QoSModel
}

// QoSModel is how the emulator reads the configuration the target
// holds (its drivers' formats, which this package does not import).
type QoSModel struct {
	// Key is a path as text; a leaf under another path has that path's
	// text and "/" as prefix.
	Key func(prefix, path *pb.Path) string
	// Value is a leaf's value as text; an error refuses it.
	Value func(*pb.TypedValue) (string, error)
	// Check refuses a configuration (leaf key -> value text).
	Check func(map[string]string) error
	// On sees each configuration a Set made.
	On func(map[string]string)
	// JSON is the JSON_IETF value of the leaves under a path, how a Get
	// asking for JSON_IETF is answered (one update per path, as targets
	// answer a subtree); nil: leaf by leaf.
	JSON func(path string, leaves map[string]string) ([]byte, error)
}

// ServeQoS makes the target answer Get and Set for configuration
// leaves, starting from initial (full paths). A Set is applied whole or
// not at all: the result must pass m.Check; m.On then sees it.
func (t *Target) ServeQoS(initial []*pb.Update, m QoSModel) {
	leaves := map[string]*pb.Update{}
	for _, u := range initial {
		leaves[m.Key(nil, u.GetPath())] = u
	}
	t.qos.mu.Lock()
	defer t.qos.mu.Unlock()
	t.qos.leaves, t.qos.m = leaves, m
}

// Get answers the leaves under each path of the request.
func (t *Target) Get(_ context.Context, req *pb.GetRequest) (*pb.GetResponse, error) {
	q := &t.qos
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.leaves == nil {
		return nil, status.Error(codes.Unimplemented, "Get is not served by this target")
	}
	now := time.Now().UnixNano()
	resp := &pb.GetResponse{}
	for _, p := range req.GetPath() {
		prefix := q.m.Key(req.GetPrefix(), p)
		n := &pb.Notification{Timestamp: now}
		if req.GetEncoding() == pb.Encoding_JSON_IETF && q.m.JSON != nil {
			text := map[string]string{}
			for k, u := range q.leaves {
				text[k], _ = q.m.Value(u.GetVal())
			}
			j, err := q.m.JSON(prefix, text)
			if err != nil {
				return nil, status.Errorf(codes.Internal, "%v", err)
			}
			n.Update = []*pb.Update{{Path: p, Val: &pb.TypedValue{Value: &pb.TypedValue_JsonIetfVal{JsonIetfVal: j}}}}
			resp.Notification = append(resp.Notification, n)
			continue
		}
		for _, k := range sortedKeys(q.leaves) {
			if k == prefix || strings.HasPrefix(k, strings.TrimSuffix(prefix, "/")+"/") {
				n.Update = append(n.Update, proto.Clone(q.leaves[k]).(*pb.Update))
			}
		}
		resp.Notification = append(resp.Notification, n)
	}
	return resp, nil
}

// Set applies deletes, replaces and updates in that order (gNMI
// specification 3.4.3), all or nothing. Values must be scalars.
func (t *Target) Set(_ context.Context, req *pb.SetRequest) (*pb.SetResponse, error) {
	q := &t.qos
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.leaves == nil {
		return nil, status.Error(codes.Unimplemented, "Set is not served by this target")
	}
	next := make(map[string]*pb.Update, len(q.leaves))
	for k, v := range q.leaves {
		next[k] = v
	}
	resp := &pb.SetResponse{Timestamp: time.Now().UnixNano()}
	for _, d := range req.GetDelete() {
		prefix := q.m.Key(req.GetPrefix(), d)
		for k := range next {
			if k == prefix || strings.HasPrefix(k, prefix+"/") {
				delete(next, k)
			}
		}
		resp.Response = append(resp.Response, &pb.UpdateResult{Path: d, Op: pb.UpdateResult_DELETE})
	}
	for _, set := range []struct {
		us []*pb.Update
		op pb.UpdateResult_Operation
	}{{req.GetReplace(), pb.UpdateResult_REPLACE}, {req.GetUpdate(), pb.UpdateResult_UPDATE}} {
		for _, u := range set.us {
			if _, err := q.m.Value(u.GetVal()); err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "%s: %v", q.m.Key(req.GetPrefix(), u.GetPath()), err)
			}
			full := &pb.Path{Elem: append(append([]*pb.PathElem(nil), req.GetPrefix().GetElem()...), u.GetPath().GetElem()...)}
			next[q.m.Key(nil, full)] = &pb.Update{Path: full, Val: u.GetVal()}
			resp.Response = append(resp.Response, &pb.UpdateResult{Path: u.GetPath(), Op: set.op})
		}
	}
	text := map[string]string{}
	for k, u := range next {
		text[k], _ = q.m.Value(u.GetVal())
	}
	if err := q.m.Check(text); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	q.leaves = next
	q.m.On(text)
	return resp, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
