package tofino

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/internal/yamlpos"
)

// Bundle is an image on the local disk: a directory, or a .tar.gz that
// OpenBundle unpacks into a temporary directory (removed by Close).
type Bundle struct {
	Source   string // what was opened
	Dir      string // the bundle root on disk
	Manifest *Manifest
	// Raw is image.yaml byte for byte: it is pushed as is and compared with
	// what a switch already holds, since images are immutable.
	Raw []byte
	ix  *yamlpos.Index
	tmp string
}

// maxBundleBytes bounds what a .tar.gz may unpack to (a Tofino binary is a
// few MB; schemas and contexts tens of MB at most).
const maxBundleBytes = 1 << 30

// OpenBundle reads a bundle's manifest; Validate checks its files.
func OpenBundle(src string) (*Bundle, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("image bundle: %w", err)
	}
	b := &Bundle{Source: src, Dir: src}
	if !st.IsDir() {
		if !strings.HasSuffix(src, ".tar.gz") && !strings.HasSuffix(src, ".tgz") {
			return nil, fmt.Errorf("image bundle %s: want a directory or a .tar.gz", src)
		}
		if b.tmp, err = os.MkdirTemp("", "labctl-image-"); err != nil {
			return nil, err
		}
		if b.Dir, err = untar(src, b.tmp); err != nil {
			b.Close()
			return nil, fmt.Errorf("image bundle %s: %w", src, err)
		}
	}
	mf := filepath.Join(b.Dir, ManifestFile)
	if b.Raw, err = os.ReadFile(mf); err != nil {
		b.Close()
		return nil, fmt.Errorf("image bundle %s: %w", src, err)
	}
	name := filepath.Join(src, ManifestFile)
	if b.tmp != "" {
		name = src + ":" + ManifestFile
	}
	if b.Manifest, b.ix, err = parseManifest(b.Raw, name); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close removes what OpenBundle unpacked.
func (b *Bundle) Close() error {
	if b.tmp == "" {
		return nil
	}
	return os.RemoveAll(b.tmp)
}

// untar unpacks regular files and directories of a .tar.gz into dir and
// returns the bundle root: dir, or its one top-level directory when the
// archive wraps the bundle in one (tar -czf x.tar.gz mybundle/).
func untar(src, dir string) (string, error) {
	f, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	tr := tar.NewReader(zr)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if !fs.ValidPath(name) {
			return "", fmt.Errorf("%s: unsafe path in archive", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return "", err
			}
		case tar.TypeReg:
			total += h.Size
			if total > maxBundleBytes {
				return "", fmt.Errorf("unpacks to more than %d bytes", maxBundleBytes)
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", err
			}
			w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return "", err
			}
			_, err = io.Copy(w, io.LimitReader(tr, h.Size))
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return "", err
			}
		default:
			return "", fmt.Errorf("%s: only regular files and directories belong in a bundle", h.Name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err == nil {
		return dir, nil
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) == 1 && ents[0].IsDir() {
		return filepath.Join(dir, ents[0].Name()), nil
	}
	return dir, nil
}

// Validate checks that the bundle is what its manifest says: every listed
// file present with its sha256, nothing unlisted, and a conf that loads the
// manifest's program from listed files with the target's binary. Problems
// are reported as file:line: field: message (the manifest's line). Each
// check validates the load-balancing scheme and its parameters too.
func (b *Bundle) Validate(checks ...SchemeCheck) error {
	m, ix := b.Manifest, b.ix
	var ps yamlpos.Problems
	for _, check := range checks {
		m.checkScheme(ix, &ps, check)
	}
	listed := map[string]bool{ManifestFile: true}
	for i, f := range m.Files {
		listed[f.Path] = true
		sum, err := sshdrv.FileSHA256(filepath.Join(b.Dir, filepath.FromSlash(f.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			ix.Add(&ps, fmt.Sprintf("files[%d].path", i), "%s is not in the bundle", f.Path)
		case err != nil:
			ix.Add(&ps, fmt.Sprintf("files[%d].path", i), "%s: %v", f.Path, err)
		case sum != f.SHA256:
			ix.Add(&ps, fmt.Sprintf("files[%d].sha256", i), "%s has sha256 %s, not the manifest's %s (changed after the manifest was written?)",
				f.Path, sum, f.SHA256)
		}
	}
	_ = filepath.WalkDir(b.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(b.Dir, p)
		if rel = filepath.ToSlash(rel); !listed[rel] {
			ix.Add(&ps, "files", "%s is in the bundle but not listed (list it with its sha256, or remove it)", rel)
		}
		return nil
	})
	b.checkConf(&ps)
	return ps.Err()
}

// checkConf checks the conf against the manifest.
func (b *Bundle) checkConf(ps *yamlpos.Problems) {
	m, ix := b.Manifest, b.ix
	data, err := os.ReadFile(filepath.Join(b.Dir, m.ConfPath()))
	if err != nil {
		return // reported as a missing file
	}
	conf, err := ParseConf(data)
	if err != nil {
		ix.Add(ps, "program", "%s: %v", m.ConfPath(), err)
		return
	}
	if names := conf.ProgramNames(); !slices.Contains(names, m.Program) {
		ix.Add(ps, "program", "%s loads program %s, not %s", m.ConfPath(), strings.Join(names, ", "), m.Program)
	}
	listed := map[string]bool{}
	for _, f := range m.Files {
		listed[f.Path] = true
	}
	for _, r := range conf.Artifacts() {
		switch {
		case r.Path == "":
			ix.Add(ps, "files", "%s: %s is empty", m.ConfPath(), r.Field)
		case path.IsAbs(r.Path) || strings.HasPrefix(path.Clean(r.Path), ".."):
			ix.Add(ps, "files", "%s: %s = %s: artifacts are named relative to the bundle root", m.ConfPath(), r.Field, r.Path)
		case !listed[path.Clean(r.Path)]:
			ix.Add(ps, "files", "%s: %s = %s is not listed", m.ConfPath(), r.Field, r.Path)
		}
	}
	want := targetBinary[m.Target]
	for _, p := range conf.Programs {
		if base := path.Base(p.BFRT); p.BFRT != "" && base != "bf-rt.json" && base != "bfrt.json" {
			ix.Add(ps, "files", "%s: %s.bfrt-config = %s: want bf-rt.json (or bfrt.json)", m.ConfPath(), p.Field, p.BFRT)
		}
		for _, pl := range p.Pipelines {
			if base := path.Base(pl.Config); pl.Config != "" && base != want {
				ix.Add(ps, "target", "%s loads %s (%s.config); target %s needs %s", m.ConfPath(), pl.Config, pl.Field, m.Target, want)
			}
		}
	}
	for _, fam := range conf.ChipFamilies {
		if fam != "" && !strings.EqualFold(fam, m.Target) {
			ix.Add(ps, "target", "%s: chip_family %s does not match target %s", m.ConfPath(), fam, m.Target)
		}
	}
}
