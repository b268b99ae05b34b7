package archive

import (
	"encoding/json"
	"fmt"
	"os"
)

// FormatVersion is the manifest format this labctl writes. Format 1 is
// every manifest written before the format field existed (read as is);
// format 2 adds the field and nothing else. A change a reader of the
// previous format would misread raises it, with the upgrade in
// ReadManifest.
const FormatVersion = 2

// OldestFormat is the oldest manifest format ReadManifest still reads.
const OldestFormat = 1

// Header is the part of manifest.json the archive owns. A manifest type
// embeds it (first, so "format" leads the file) and thereby satisfies
// Versioned.
type Header struct {
	// Format is the manifest's format: FormatVersion when written by
	// WriteManifest; after ReadManifest, the format found (1 when it had
	// none). Zero is left out, so a manifest marshalled without
	// WriteManifest reads as format 1, which it is.
	Format int `json:"format,omitempty"`
}

// ManifestHeader gives the archive the header of the manifest embedding it.
func (h *Header) ManifestHeader() *Header { return h }

// Versioned is a manifest: any type embedding Header.
type Versioned interface{ ManifestHeader() *Header }

// FormatError is a manifest this labctl cannot read: its format is newer
// (or otherwise unknown) than the formats it knows.
type FormatError struct {
	File           string
	Found          int
	Oldest, Newest int
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("run archive %s: manifest format %d, but this labctl reads formats %d to %d (a newer labctl wrote it: read it with that one)",
		e.File, e.Found, e.Oldest, e.Newest)
}

// ReadManifest reads the manifest of d into m, from any format between
// OldestFormat and FormatVersion (m's Header then says which), and fails
// with a *FormatError on another. A missing manifest's error satisfies
// errors.Is(err, fs.ErrNotExist).
func ReadManifest(d Dir, m Versioned) error {
	path := d.Manifest()
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("run archive: %w", err)
	}
	var probe struct {
		Format *int `json:"format"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("run archive %s: %w", path, err)
	}
	format := 1 // written before manifests said their format
	if probe.Format != nil {
		format = *probe.Format
	}
	if format < OldestFormat || format > FormatVersion {
		return &FormatError{File: path, Found: format, Oldest: OldestFormat, Newest: FormatVersion}
	}
	// Format 1 differs from 2 only by the missing field: nothing to upgrade.
	if err := json.Unmarshal(b, m); err != nil {
		return fmt.Errorf("run archive %s: %w", path, err)
	}
	m.ManifestHeader().Format = format
	return nil
}

// WriteManifest writes m as d's manifest in the current format, whole or
// not at all: a crash leaves the previous manifest. Callers record a stage
// here before they announce it, so a run killed there is known to have
// reached it.
func WriteManifest(d Dir, m Versioned) error {
	m.ManifestHeader().Format = FormatVersion
	return WriteJSON(d.Manifest(), m)
}
