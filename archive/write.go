package archive

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// WriteFile writes path through a temporary file (path + ".tmp") and
// renames it, so a crash never leaves a truncated file (a manifest, a
// summary) that looks complete. write gets a buffered writer.
func WriteFile(path string, write func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// WriteBytes writes b to path atomically (WriteFile).
func WriteBytes(path string, b []byte) error {
	return WriteFile(path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// WriteJSON writes v to path as indented JSON with a final newline,
// atomically: the archive's JSON documents are read by people too.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteBytes(path, append(b, '\n'))
}

// ReadJSON decodes the JSON document at path into v. A missing file's
// error satisfies errors.Is(err, fs.ErrNotExist); a malformed one names
// the file.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
