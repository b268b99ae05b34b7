package netconfd

import (
	"fmt"
	"strconv"
	"time"
)

// confirmed is a confirmed commit waiting for its confirming commit (RFC
// 6241 8.4). Without persist it belongs to the session that made it and
// is rolled back when that session ends; with persist it outlives the
// session, and any session that names its persist-id may confirm or
// cancel it. Either way it is rolled back when its timeout expires.
type confirmed struct {
	session  int
	persist  string // the persist token; "" for a session-bound commit
	previous *node
	timer    *time.Timer
}

// pendingFor checks that session id, naming persistID (nil: none given),
// may confirm, extend or cancel the pending confirmed commit.
func (s *Server) pendingFor(id int, persistID *node, what string) error {
	p := s.pending
	switch {
	case persistID != nil && p == nil:
		return &rpcError{"protocol", "invalid-value", "persist-id", "no confirmed commit is pending"}
	case persistID != nil && (p.persist == "" || persistID.Text != p.persist):
		return &rpcError{"protocol", "invalid-value", "persist-id",
			fmt.Sprintf("persist-id %q matches no pending confirmed commit", persistID.Text)}
	case persistID != nil:
		return nil
	case p == nil:
		return nil
	case p.persist != "":
		return &rpcError{"protocol", "invalid-value", what,
			"a persistent confirmed commit is pending: give its persist-id"}
	case p.session != id:
		// Without persist, the confirming commit must come from the
		// session that made the confirmed one.
		tag := "in-use"
		if what == "cancel-commit" {
			tag = "operation-failed"
		}
		return &rpcError{"protocol", tag, what, fmt.Sprintf("the pending confirmed commit belongs to session %d", p.session)}
	}
	return nil
}

func (s *Server) commit(id int, op *node) error {
	for _, ds := range []string{"running", "candidate"} {
		if err := s.locked(ds, id); err != nil {
			return err
		}
	}
	persistID, persist := op.child("persist-id"), op.child("persist")
	if err := s.pendingFor(id, persistID, "commit"); err != nil {
		return err
	}
	isConfirmed := op.child("confirmed") != nil
	if persist != nil && (!isConfirmed || persist.Text == "") {
		return &rpcError{"protocol", "invalid-value", "persist", "persist needs confirmed and a non-empty token"}
	}
	if s.failCommit != nil && s.failCommit() {
		return &rpcError{"application", "operation-failed", "commit", "commit failed: the device refused the configuration"}
	}
	if err := s.check(s.candidate); err != nil {
		return err
	}
	if !isConfirmed {
		if s.pending != nil { // the confirming commit
			s.pending.timer.Stop()
			s.pending = nil
		}
		s.running = s.candidate.clone()
		s.changedLocked()
		return nil
	}
	timeout := 600 * time.Second // RFC 6241 default
	if t := op.child("confirm-timeout"); t != nil {
		secs, err := strconv.Atoi(t.Text)
		if err != nil || secs < 1 {
			return &rpcError{"protocol", "invalid-value", "confirm-timeout", fmt.Sprintf("bad confirm-timeout %q", t.Text)}
		}
		timeout = time.Duration(secs) * time.Second
	}
	if s.pending == nil {
		s.pending = &confirmed{session: id, previous: s.running.clone()}
	} else {
		s.pending.timer.Stop() // a follow-up confirmed commit extends the deadline
	}
	p := s.pending
	p.session = id
	if persist != nil {
		p.persist = persist.Text
	} else if persistID == nil {
		p.persist = "" // a follow-up without persist binds it to this session
	}
	p.timer = time.AfterFunc(timeout, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.pending == p {
			s.rollbackLocked()
		}
	})
	s.running = s.candidate.clone()
	s.changedLocked()
	return nil
}

// cancelCommit rolls the pending confirmed commit back: a session-bound
// one from its own session, a persistent one from any session naming its
// persist-id.
func (s *Server) cancelCommit(id int, op *node) error {
	persistID := op.child("persist-id")
	if s.pending == nil && persistID == nil {
		return &rpcError{"protocol", "invalid-value", "cancel-commit", "no confirmed commit is pending"}
	}
	if err := s.pendingFor(id, persistID, "cancel-commit"); err != nil {
		return err
	}
	s.rollbackLocked()
	return nil
}
