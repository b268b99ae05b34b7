package netconfd

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

type client struct {
	t       *testing.T
	c       net.Conn
	r       *bufio.Reader
	chunked bool
	id      int
}

// open starts a session; base11 offers base:1.1 in the client's hello.
func open(t *testing.T, s *Server, base11 bool) *client {
	t.Helper()
	a, b := net.Pipe()
	go s.Serve(context.Background(), b)
	c := &client{t: t, c: a, r: bufio.NewReader(a), chunked: base11}
	hello, err := readMsg(c.r, false)
	if err != nil || !strings.Contains(string(hello), "urn:ietf:params:netconf:base:1.1") {
		t.Fatalf("server hello: %q %v", hello, err)
	}
	caps := `<capability>urn:ietf:params:netconf:base:1.0</capability>`
	if base11 {
		caps += `<capability>urn:ietf:params:netconf:base:1.1</capability>`
	}
	writeMsg(a, []byte(`<hello xmlns="`+ncNS+`"><capabilities>`+caps+`</capabilities></hello>`), false)
	t.Cleanup(func() { a.Close() })
	return c
}

func (c *client) rpc(body string) string {
	c.t.Helper()
	c.id++
	msg := fmt.Sprintf(`<rpc xmlns="%s" message-id="%d">%s</rpc>`, ncNS, c.id, body)
	if err := writeMsg(c.c, []byte(msg), c.chunked); err != nil {
		c.t.Fatal(err)
	}
	reply, err := readMsg(c.r, c.chunked)
	if err != nil {
		c.t.Fatal(err)
	}
	if !strings.Contains(string(reply), fmt.Sprintf(`message-id="%d"`, c.id)) {
		c.t.Fatalf("reply without our message-id: %s", reply)
	}
	return string(reply)
}

const (
	lock    = `<lock><target><candidate/></target></lock>`
	running = `<get-config><source><running/></source></get-config>`
)

func editRPC(body string) string {
	return `<edit-config><target><candidate/></target><config>` + body + `</config></edit-config>`
}

func port(name, xoff string) string {
	return `<ports xmlns="urn:labctl:qos"><port><name>` + name + `</name><xoff-bytes>` + xoff + `</xoff-bytes></port></ports>`
}

func TestChunkedFramingEditsAndErrors(t *testing.T) {
	s := New("leaf1", nil)
	c := open(t, s, true)
	if r := c.rpc(editRPC(port("1/0", "524288"))); !strings.Contains(r, "<ok/>") {
		t.Fatal(r)
	}
	if r := c.rpc(`<commit/>`); !strings.Contains(r, "<ok/>") {
		t.Fatal(r)
	}
	if r := c.rpc(running); !strings.Contains(r, "<xoff-bytes>524288</xoff-bytes>") {
		t.Fatalf("get-config: %s", r)
	}
	// merge changes a leaf in place; create of an existing entry and delete
	// of a missing one are errors that change nothing
	c.rpc(editRPC(port("1/0", "262144")))
	if r := c.rpc(editRPC(`<ports xmlns="urn:labctl:qos"><port operation="create"><name>1/0</name></port></ports>`)); !strings.Contains(r, "<error-tag>data-exists</error-tag>") {
		t.Fatal(r)
	}
	if r := c.rpc(editRPC(`<ports xmlns="urn:labctl:qos"><port operation="delete"><name>9/0</name></port></ports>`)); !strings.Contains(r, "<error-tag>data-missing</error-tag>") {
		t.Fatal(r)
	}
	if r := c.rpc(`<get-config><source><candidate/></source></get-config>`); !strings.Contains(r, "262144") || strings.Count(r, "<port>") != 1 {
		t.Fatalf("candidate: %s", r)
	}
	if r := c.rpc(`<frobnicate/>`); !strings.Contains(r, "operation-not-supported") {
		t.Fatal(r)
	}
}

func TestLocksAreExclusive(t *testing.T) {
	s := New("leaf1", nil)
	a, b := open(t, s, false), open(t, s, true)
	if r := a.rpc(lock); !strings.Contains(r, "<ok/>") {
		t.Fatal(r)
	}
	if r := b.rpc(lock); !strings.Contains(r, "<error-tag>lock-denied</error-tag>") {
		t.Fatal(r)
	}
	if r := b.rpc(editRPC(port("1/0", "1"))); !strings.Contains(r, "<error-tag>in-use</error-tag>") {
		t.Fatal(r)
	}
	a.rpc(`<close-session/>`)
	time.Sleep(20 * time.Millisecond)
	if r := b.rpc(lock); !strings.Contains(r, "<ok/>") {
		t.Fatalf("a closed session's lock must be released: %s", r)
	}
}

func TestConfirmedCommitRollsBack(t *testing.T) {
	s := New("leaf1", nil)
	c := open(t, s, false)
	c.rpc(editRPC(port("1/0", "100")))
	c.rpc(`<commit/>`)
	// not confirmed within its timeout: the device restores the old config
	c.rpc(editRPC(port("1/0", "200")))
	if r := c.rpc(`<commit><confirmed/><confirm-timeout>1</confirm-timeout></commit>`); !strings.Contains(r, "<ok/>") {
		t.Fatal(r)
	}
	if r := c.rpc(running); !strings.Contains(r, ">200<") {
		t.Fatalf("confirmed commit not applied: %s", r)
	}
	time.Sleep(1200 * time.Millisecond)
	if r := c.rpc(running); !strings.Contains(r, ">100<") {
		t.Fatalf("no rollback after the confirm timeout: %s", r)
	}
	// confirmed, then confirmed by a plain commit: it stays
	c.rpc(editRPC(port("1/0", "300")))
	c.rpc(`<commit><confirmed/><confirm-timeout>1</confirm-timeout></commit>`)
	c.rpc(`<commit/>`)
	time.Sleep(1200 * time.Millisecond)
	if r := c.rpc(running); !strings.Contains(r, ">300<") {
		t.Fatalf("a confirmed commit was rolled back: %s", r)
	}
	// the session that made a confirmed commit goes away: roll back
	d := open(t, s, true)
	d.rpc(editRPC(port("1/0", "400")))
	d.rpc(`<commit><confirmed/></commit>`)
	d.c.Close()
	time.Sleep(50 * time.Millisecond)
	if r := c.rpc(running); !strings.Contains(r, ">300<") {
		t.Fatalf("no rollback when the committing session ended: %s", r)
	}
}

func FuzzReadMsg(f *testing.F) {
	f.Add([]byte("\n#4\nabcd\n##\n"), true)
	f.Add([]byte("<rpc/>]]>]]>"), false)
	f.Fuzz(func(t *testing.T, b []byte, chunked bool) {
		_, _ = readMsg(bufio.NewReader(strings.NewReader(string(b))), chunked)
	})
}

// Every operation the provisioning issue lists, on running and candidate,
// and an rpc-error for each kind of bad input.
func TestOperationsAndRPCErrors(t *testing.T) {
	s := New("leaf1", func(tr *Tree) error {
		var bad string
		tr.Leaves(func(path, value string) {
			if value == "bad" {
				bad = path
			}
		})
		if bad != "" {
			return fmt.Errorf("%s: bad value", bad)
		}
		return nil
	})
	c := open(t, s, true)
	ok := func(r string) {
		t.Helper()
		if !strings.Contains(r, "<ok/>") && !strings.Contains(r, "<data>") {
			t.Fatal(r)
		}
	}
	fails := func(r, tag string) {
		t.Helper()
		if !strings.Contains(r, "<error-tag>"+tag+"</error-tag>") {
			t.Fatalf("want %s: %s", tag, r)
		}
	}
	// edit-config on running: merge, replace, delete
	editRunning := func(body string) string {
		return c.rpc(`<edit-config><target><running/></target><config>` + body + `</config></edit-config>`)
	}
	ok(editRunning(port("1/0", "100")))
	ok(editRunning(port("2/0", "200")))
	ok(editRunning(`<ports xmlns="urn:labctl:qos"><port operation="replace"><name>1/0</name><xon-bytes>50</xon-bytes></port></ports>`))
	r := c.rpc(`<get/>`)
	if !strings.Contains(r, "<xon-bytes>50</xon-bytes>") || strings.Contains(r, ">100<") {
		t.Fatalf("replace on running: %s", r)
	}
	ok(editRunning(`<ports xmlns="urn:labctl:qos"><port operation="delete"><name>2/0</name></port></ports>`))
	if r := c.rpc(running); strings.Contains(r, "2/0") {
		t.Fatalf("delete on running: %s", r)
	}
	fails(editRunning(port("3/0", "bad")), "invalid-value") // the model refuses, running is checked at once
	// validate: candidate, running, inline config; unknown sources refused
	ok(c.rpc(editRPC(port("4/0", "bad"))))
	fails(c.rpc(`<validate><source><candidate/></source></validate>`), "invalid-value")
	ok(c.rpc(`<validate><source><running/></source></validate>`))
	fails(c.rpc(`<validate><source><config>`+port("5/0", "bad")+`</config></source></validate>`), "invalid-value")
	fails(c.rpc(`<get-config><source><startup/></source></get-config>`), "invalid-value")
	fails(c.rpc(`<get-config/>`), "missing-element")
	// discard-changes drops the candidate's edits
	ok(c.rpc(`<discard-changes/>`))
	if r := c.rpc(`<get-config><source><candidate/></source></get-config>`); strings.Contains(r, "4/0") {
		t.Fatalf("discard-changes: %s", r)
	}
	fails(c.rpc(`<edit-config><target><candidate/></target><default-operation>merge-all</default-operation><config/></edit-config>`), "invalid-value")
	fails(c.rpc(`<edit-config><target><startup/></target><config/></edit-config>`), "missing-element")
	fails(c.rpc(`<commit><persist>x</persist></commit>`), "invalid-value") // persist needs confirmed
	fails(c.rpc(`<commit><confirmed/><confirm-timeout>soon</confirm-timeout></commit>`), "invalid-value")
}

func TestCandidateLockRules(t *testing.T) {
	s := New("leaf1", nil)
	a, b := open(t, s, false), open(t, s, true)
	// no lock on a candidate with someone's uncommitted edits
	a.rpc(editRPC(port("1/0", "1")))
	if r := b.rpc(lock); !strings.Contains(r, "<error-tag>lock-denied</error-tag>") || !strings.Contains(r, "uncommitted") {
		t.Fatal(r)
	}
	a.rpc(`<discard-changes/>`)
	if r := b.rpc(lock); !strings.Contains(r, "<ok/>") {
		t.Fatal(r)
	}
	// the lock holder's edits are discarded when its session ends
	b.rpc(editRPC(port("1/0", "2")))
	b.c.Close()
	time.Sleep(50 * time.Millisecond)
	if r := a.rpc(`<get-config><source><candidate/></source></get-config>`); strings.Contains(r, "1/0") {
		t.Fatalf("a dead session's candidate edits survived: %s", r)
	}
	// a confirmed commit is confirmed or cancelled by its own session only
	c, d := open(t, s, true), open(t, s, true)
	c.rpc(editRPC(port("1/0", "3")))
	c.rpc(`<commit><confirmed/></commit>`)
	if r := d.rpc(`<commit/>`); !strings.Contains(r, "<error-tag>in-use</error-tag>") {
		t.Fatal(r)
	}
	if r := d.rpc(`<cancel-commit/>`); !strings.Contains(r, "<error-tag>operation-failed</error-tag>") {
		t.Fatal(r)
	}
	if r := c.rpc(`<cancel-commit/>`); !strings.Contains(r, "<ok/>") {
		t.Fatal(r)
	}
	if r := d.rpc(running); strings.Contains(r, "1/0") {
		t.Fatalf("cancel-commit did not restore: %s", r)
	}
}

// A startup config is the running and candidate config before any
// session, checked by the device's validator and announced as a change;
// one the validator refuses is an error and leaves the device empty.
func TestBootLoadsAStartupConfig(t *testing.T) {
	refuse := func(tr *Tree) error {
		if strings.Contains(tr.XML(), ">0<") {
			return fmt.Errorf("xoff 0 refused")
		}
		return nil
	}
	s := New("leaf1", refuse)
	var announced string
	s.OnCommit(func(r *Tree) { announced = r.XML() })
	if err := s.Boot(port("1/0", "0")); err == nil || !strings.Contains(err.Error(), "xoff 0 refused") || announced != "" {
		t.Fatalf("a refused startup config: %v, announced %q", err, announced)
	}
	if err := s.Boot(port("1/0", "524288")); err != nil || !strings.Contains(announced, "<xoff-bytes>524288</xoff-bytes>") {
		t.Fatalf("%v, announced %q", err, announced)
	}
	c := open(t, s, false)
	for _, ds := range []string{"running", "candidate"} {
		if r := c.rpc(`<get-config><source><` + ds + `/></source></get-config>`); !strings.Contains(r, "<xoff-bytes>524288</xoff-bytes>") {
			t.Errorf("%s after boot: %s", ds, r)
		}
	}
	if r := c.rpc(lock); !strings.Contains(r, "<ok/>") {
		t.Errorf("the candidate must equal running after boot (lockable): %s", r)
	}
}

// A confirmed commit made with persist outlives its session: any session
// naming its persist-id confirms or cancels it, no other can, and it is
// still rolled back when its timeout expires.
func TestPersistentConfirmedCommit(t *testing.T) {
	s := New("leaf1", nil)
	base := open(t, s, true)
	base.rpc(editRPC(port("1/0", "100")))
	base.rpc(`<commit/>`)
	stage := func(xoff, persist, timeout string) {
		t.Helper()
		c := open(t, s, true)
		c.rpc(lock)
		c.rpc(editRPC(port("1/0", xoff)))
		if r := c.rpc(`<commit><confirmed/><confirm-timeout>` + timeout + `</confirm-timeout><persist>` + persist + `</persist></commit>`); !strings.Contains(r, "<ok/>") {
			t.Fatal(r)
		}
		c.c.Close() // the session drops with the commit unconfirmed
		time.Sleep(50 * time.Millisecond)
		if r := base.rpc(running); !strings.Contains(r, ">"+xoff+"<") {
			t.Fatalf("a persistent confirmed commit was rolled back when its session ended: %s", r)
		}
	}
	stage("200", "tok-a", "60")
	for _, tc := range []struct{ rpc, want string }{
		{`<commit/>`, "<error-tag>invalid-value</error-tag>"},
		{`<commit><persist-id>tok-b</persist-id></commit>`, "<error-tag>invalid-value</error-tag>"},
		{`<cancel-commit/>`, "<error-tag>invalid-value</error-tag>"},
		{`<cancel-commit><persist-id>nope</persist-id></cancel-commit>`, "<error-tag>invalid-value</error-tag>"},
		{`<commit><confirmed/><persist></persist></commit>`, "<error-tag>invalid-value</error-tag>"},
	} {
		if r := base.rpc(tc.rpc); !strings.Contains(r, tc.want) {
			t.Errorf("%s: %s, want %s", tc.rpc, r, tc.want)
		}
	}
	other := open(t, s, false)
	if r := other.rpc(`<commit><persist-id>tok-a</persist-id></commit>`); !strings.Contains(r, "<ok/>") {
		t.Fatalf("confirming from another session: %s", r)
	}
	if r := other.rpc(`<commit><persist-id>tok-a</persist-id></commit>`); !strings.Contains(r, "no confirmed commit is pending") {
		t.Fatalf("confirming twice: %s", r)
	}
	if r := base.rpc(running); !strings.Contains(r, ">200<") {
		t.Fatalf("confirmed: %s", r)
	}

	stage("300", "tok-c", "60")
	if r := other.rpc(`<cancel-commit><persist-id>tok-c</persist-id></cancel-commit>`); !strings.Contains(r, "<ok/>") {
		t.Fatalf("cancel from another session: %s", r)
	}
	if r := base.rpc(running); !strings.Contains(r, ">200<") {
		t.Fatalf("cancel-commit did not restore: %s", r)
	}

	stage("400", "tok-d", "1")
	time.Sleep(1200 * time.Millisecond)
	if r := base.rpc(running); !strings.Contains(r, ">200<") {
		t.Fatalf("no rollback after the confirm timeout: %s", r)
	}
	if r := base.rpc(`<cancel-commit><persist-id>tok-d</persist-id></cancel-commit>`); !strings.Contains(r, "no confirmed commit is pending") {
		t.Fatalf("cancel after the timeout: %s", r)
	}
}

// FuzzHandle: any bytes a client sends as one message get one rpc-reply
// (an rpc-error for what is not a well-formed rpc), never a panic.
func FuzzHandle(f *testing.F) {
	f.Add([]byte(`<rpc message-id="1">` + editRPC(port("1/0", "100")) + `</rpc>`))
	f.Add([]byte(`<rpc message-id="2"><commit><confirmed/><persist>t</persist></commit></rpc>`))
	f.Add([]byte(`<rpc message-id="3"><cancel-commit><persist-id>t</persist-id></cancel-commit></rpc>`))
	f.Add([]byte(`<rpc><get-config><source><running/></source></get-config></rpc>`))
	f.Add([]byte(`<hello/>`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := New("leaf1", nil)
		reply, _ := s.handle(1, msg)
		if !strings.Contains(string(reply), "<rpc-reply") {
			t.Fatalf("not an rpc-reply: %s", reply)
		}
		s.endSession(1)
	})
}
