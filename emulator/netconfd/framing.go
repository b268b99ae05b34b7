package netconfd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

const eom = "]]>]]>"

// readMsg reads one message: up to "]]>]]>" (base 1.0) or a chunked
// message ending with "\n##\n" (base 1.1).
func readMsg(r *bufio.Reader, chunked bool) ([]byte, error) {
	if !chunked {
		var buf bytes.Buffer
		for {
			b, err := r.ReadByte()
			if err != nil {
				return nil, err
			}
			buf.WriteByte(b)
			if b == '>' && bytes.HasSuffix(buf.Bytes(), []byte(eom)) {
				return buf.Bytes()[:buf.Len()-len(eom)], nil
			}
		}
	}
	var msg []byte
	for {
		// "\n#<size>\n" or "\n##\n"
		if b, err := r.ReadByte(); err != nil {
			return nil, err
		} else if b != '\n' {
			return nil, fmt.Errorf("netconf 1.1 framing: expected LF, got %q", b)
		}
		if b, err := r.ReadByte(); err != nil {
			return nil, err
		} else if b != '#' {
			return nil, fmt.Errorf("netconf 1.1 framing: expected '#', got %q", b)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = line[:len(line)-1]
		if line == "#" {
			return msg, nil
		}
		n, err := strconv.Atoi(line)
		if err != nil || n < 1 || n > 1<<30 {
			return nil, fmt.Errorf("netconf 1.1 framing: bad chunk size %q", line)
		}
		chunk := make([]byte, n)
		if _, err := io.ReadFull(r, chunk); err != nil {
			return nil, err
		}
		msg = append(msg, chunk...)
	}
}

// writeMsg frames one message.
func writeMsg(w io.Writer, msg []byte, chunked bool) error {
	if !chunked {
		_, err := w.Write(append(append([]byte(nil), msg...), eom...))
		return err
	}
	if len(msg) == 0 {
		return errors.New("netconf 1.1 framing: empty message")
	}
	_, err := fmt.Fprintf(w, "\n#%d\n%s\n##\n", len(msg), msg)
	return err
}
