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
