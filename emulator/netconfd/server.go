package netconfd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Validator checks a candidate configuration against the device's data
// model; a nil Validator accepts any well-formed tree.
type Validator func(config *Tree) error

// Tree is a read-only view of configuration data for validators and tests.
type Tree struct{ n *node }

// Leaves calls fn for every leaf with its slash-separated path of names
// (list entries include their key: "interfaces/interface[1/0]/...").
func (t *Tree) Leaves(fn func(path, value string)) {
	var walk func(n *node, p string)
	walk = func(n *node, p string) {
		for _, k := range n.Kids {
			kp := p + "/" + k.Name.Local
			if key := k.key(); key != "" && len(k.Kids) > 0 {
				kp += "[" + key + "]"
			}
			if len(k.Kids) == 0 {
				fn(strings.TrimPrefix(kp, "/"), k.Text)
			} else {
				walk(k, kp)
			}
		}
	}
	walk(t.n, "")
}

// XML is the configuration as XML (the children of <data>).
func (t *Tree) XML() string {
	var b bytes.Buffer
	for _, k := range t.n.Kids {
		k.write(&b, ncNS)
	}
	return b.String()
}

// Server is one device's NETCONF service; its datastores are shared by
// all sessions.
type Server struct {
	name     string
	validate Validator

	mu         sync.Mutex
	running    *node
	candidate  *node
	locks      map[string]int // datastore -> session id
	nextID     int
	pending    *confirmed // a confirmed commit not yet confirmed
	failCommit func() bool
	onCommit   func(running *Tree)
}

// OnCommit registers fn to hear every change of the running configuration
// (commits, confirmed commits, their rollbacks, edits of running). fn runs
// with the server locked and must not call back into it.
func (s *Server) OnCommit(fn func(running *Tree)) { s.mu.Lock(); s.onCommit = fn; s.mu.Unlock() }

func (s *Server) changedLocked() {
	if s.onCommit != nil {
		s.onCommit(&Tree{s.running.clone()})
	}
}

// New makes the server of device name.
func New(name string, v Validator) *Server {
	empty := &node{Name: xmlName("data")}
	return &Server{name: name, validate: v, running: empty, candidate: empty.clone(), locks: map[string]int{}}
}

// Boot makes config (XML elements, as inside an edit-config's <config>)
// the running and candidate configuration, as a device's startup config
// is at boot: validated first, and announced to OnCommit.
func (s *Server) Boot(config string) error {
	cfg, err := parse([]byte("<config>" + config + "</config>"))
	if err != nil {
		return fmt.Errorf("netconf %s: startup config: %w", s.name, err)
	}
	work := &node{Name: xmlName("data")}
	if err := edit(work, cfg, "merge"); err != nil {
		return fmt.Errorf("netconf %s: startup config: %w", s.name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(work); err != nil {
		return fmt.Errorf("netconf %s: startup config: %w", s.name, err)
	}
	s.running, s.candidate = work, work.clone()
	s.changedLocked()
	return nil
}

// FailCommitIf registers fn, asked at every commit: true makes that commit
// fail with an rpc-error (the emulator's fault injection). fn runs with
// the server locked and must not call back into it.
func (s *Server) FailCommitIf(fn func() bool) { s.mu.Lock(); s.failCommit = fn; s.mu.Unlock() }

// Running returns the running configuration (for tests and the twin).
func (s *Server) Running() *Tree { s.mu.Lock(); defer s.mu.Unlock(); return &Tree{s.running.clone()} }

const capabilities = `<capability>urn:ietf:params:netconf:base:1.0</capability>` +
	`<capability>urn:ietf:params:netconf:base:1.1</capability>` +
	`<capability>urn:ietf:params:netconf:capability:candidate:1.0</capability>` +
	`<capability>urn:ietf:params:netconf:capability:confirmed-commit:1.1</capability>` +
	`<capability>urn:ietf:params:netconf:capability:validate:1.1</capability>` +
	`<capability>urn:ietf:params:netconf:capability:writable-running:1.0</capability>`

// Serve runs one session over rw (the SSH subsystem channel).
func (s *Server) Serve(ctx context.Context, rw io.ReadWriter) error {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	s.mu.Unlock()
	defer s.endSession(id)
	r := bufio.NewReader(rw)
	hello := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><hello xmlns="%s"><capabilities>%s</capabilities><session-id>%d</session-id></hello>`, ncNS, capabilities, id)
	if err := writeMsg(rw, []byte(hello), false); err != nil {
		return err
	}
	msg, err := readMsg(r, false)
	if err != nil {
		return err
	}
	peer, err := parse(msg)
	if err != nil || peer.Name.Local != "hello" {
		return fmt.Errorf("netconf %s: bad hello", s.name)
	}
	chunked := bytes.Contains(msg, []byte("urn:ietf:params:netconf:base:1.1"))
	for ctx.Err() == nil {
		msg, err := readMsg(r, chunked)
		if err != nil {
			return err
		}
		reply, closing := s.handle(id, msg)
		if err := writeMsg(rw, reply, chunked); err != nil {
			return err
		}
		if closing {
			return nil
		}
	}
	return ctx.Err()
}

// endSession releases a session's locks and, as RFC 6241 requires, rolls
// back a confirmed commit the session issued and did not confirm, unless
// it was made with persist (which outlives its session).
func (s *Server) endSession(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ds, owner := range s.locks {
		if owner == id {
			s.releaseLocked(ds)
		}
	}
	if s.pending != nil && s.pending.persist == "" && s.pending.session == id {
		s.rollbackLocked()
	}
}

func (s *Server) rollbackLocked() {
	s.pending.timer.Stop()
	s.running = s.pending.previous
	s.candidate = s.running.clone()
	s.pending = nil
	s.changedLocked()
}

func (s *Server) handle(id int, msg []byte) (reply []byte, closing bool) {
	rpc, err := parse(msg)
	if err != nil || rpc.Name.Local != "rpc" || len(rpc.Kids) == 0 {
		return errorReply("", &rpcError{"rpc", "malformed-message", "", "not a NETCONF rpc"}), false
	}
	mid := rpc.attr("message-id")
	op := rpc.Kids[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	var data *node
	switch op.Name.Local {
	case "get":
		// Configuration only (the emulated devices have no state data
		// under this model); filters are not applied.
		data = s.running
	case "get-config":
		data, err = s.source(op, false)
	case "edit-config":
		err = s.editConfig(id, op)
	case "validate":
		var n *node
		if n, err = s.source(op, true); err == nil {
			err = s.check(n)
		}
	case "commit":
		err = s.commit(id, op)
	case "cancel-commit":
		err = s.cancelCommit(id, op)
	case "discard-changes":
		s.candidate = s.running.clone()
	case "lock", "unlock":
		err = s.lock(id, op)
	case "close-session":
		return okReply(mid, nil), true
	default:
		err = &rpcError{"protocol", "operation-not-supported", op.Name.Local, "operation not supported"}
	}
	if err != nil {
		return errorReply(mid, err), false
	}
	return okReply(mid, data), false
}

// source is the datastore an operation reads: running or candidate (or,
// for validate, an inline <config>).
func (s *Server) source(op *node, inline bool) (*node, error) {
	src := op.child("source")
	if src == nil || len(src.Kids) == 0 {
		return nil, &rpcError{"protocol", "missing-element", "source", op.Name.Local + " needs a source"}
	}
	switch k := src.Kids[0]; k.Name.Local {
	case "running":
		return s.running, nil
	case "candidate":
		return s.candidate, nil
	case "config":
		if inline {
			n := &node{Name: xmlName("data")}
			if err := edit(n, k, "merge"); err != nil {
				return nil, err
			}
			return n, nil
		}
	}
	return nil, &rpcError{"protocol", "invalid-value", "source",
		fmt.Sprintf("datastore %q is not served (running and candidate are)", src.Kids[0].Name.Local)}
}

func datastore(op *node, which string) string {
	if c := op.child(which); c != nil && len(c.Kids) > 0 {
		return c.Kids[0].Name.Local
	}
	return ""
}

func (s *Server) locked(ds string, id int) error {
	if owner, ok := s.locks[ds]; ok && owner != id {
		return &rpcError{"protocol", "in-use", ds, fmt.Sprintf("the %s datastore is locked by session %d", ds, owner)}
	}
	return nil
}

func (s *Server) editConfig(id int, op *node) error {
	target := datastore(op, "target")
	if target != "candidate" && target != "running" {
		return &rpcError{"protocol", "missing-element", "target", "edit-config needs target candidate or running"}
	}
	if err := s.locked(target, id); err != nil {
		return err
	}
	cfg := op.child("config")
	if cfg == nil {
		return &rpcError{"protocol", "missing-element", "config", "edit-config needs a config element"}
	}
	defOp := "merge"
	if d := op.child("default-operation"); d != nil {
		defOp = d.Text
		if defOp != "merge" && defOp != "replace" && defOp != "none" {
			return &rpcError{"protocol", "invalid-value", "default-operation", fmt.Sprintf("default-operation %q (merge, replace or none)", defOp)}
		}
	}
	ds := s.candidate
	if target == "running" {
		ds = s.running
	}
	work := ds.clone() // an edit applies whole or not at all
	if err := edit(work, cfg, defOp); err != nil {
		return err
	}
	if target == "running" {
		if err := s.check(work); err != nil {
			return err
		}
		s.running, s.candidate = work, work.clone()
		s.changedLocked()
		return nil
	}
	s.candidate = work
	return nil
}

func (s *Server) check(n *node) error {
	if s.validate == nil {
		return nil
	}
	if err := s.validate(&Tree{n}); err != nil {
		return &rpcError{"application", "invalid-value", "", err.Error()}
	}
	return nil
}

func (s *Server) lock(id int, op *node) error {
	ds := datastore(op, "target")
	if ds != "candidate" && ds != "running" {
		return &rpcError{"protocol", "missing-element", "target", "lock needs target candidate or running"}
	}
	if op.Name.Local == "unlock" {
		if owner, ok := s.locks[ds]; !ok || owner != id {
			return &rpcError{"protocol", "operation-failed", ds, "this session holds no lock on " + ds}
		}
		s.releaseLocked(ds)
		return nil
	}
	if owner, ok := s.locks[ds]; ok {
		return &rpcError{"protocol", "lock-denied", ds, fmt.Sprintf("lock held by session %d", owner)}
	}
	if ds == "candidate" && !s.candidate.equal(s.running) {
		// RFC 6241 7.5: no lock on a candidate with uncommitted changes.
		return &rpcError{"protocol", "lock-denied", ds, "the candidate has uncommitted changes (discard-changes first)"}
	}
	s.locks[ds] = id
	return nil
}

// releaseLocked drops a lock. Releasing the candidate's lock, by unlock or
// because the session ended, discards its uncommitted changes (RFC 6241
// 8.3.5.2), so a client that failed midway leaves nothing behind.
func (s *Server) releaseLocked(ds string) {
	delete(s.locks, ds)
	if ds == "candidate" {
		s.candidate = s.running.clone()
	}
}

func okReply(mid string, data *node) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<rpc-reply xmlns="%s" message-id="%s">`, ncNS, escape(mid))
	if data == nil {
		b.WriteString("<ok/>")
	} else {
		b.WriteString("<data>")
		for _, k := range data.Kids {
			k.write(&b, ncNS)
		}
		b.WriteString("</data>")
	}
	b.WriteString("</rpc-reply>")
	return b.Bytes()
}

func errorReply(mid string, err error) []byte {
	re, ok := err.(*rpcError)
	if !ok {
		re = &rpcError{"application", "operation-failed", "", err.Error()}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<rpc-reply xmlns="%s" message-id="%s"><rpc-error><error-type>%s</error-type><error-tag>%s</error-tag><error-severity>error</error-severity>`,
		ncNS, escape(mid), re.Type, re.Tag)
	if re.Path != "" {
		fmt.Fprintf(&b, "<error-path>%s</error-path>", escape(re.Path))
	}
	fmt.Fprintf(&b, "<error-message>%s</error-message></rpc-error></rpc-reply>", escape(re.Msg))
	return b.Bytes()
}
