package sshd

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/pkg/sftp"
)

// rootFS serves SFTP requests inside one directory, as a chroot would. Paths
// are cleaned against "/" (so "../../etc/passwd" names <root>/etc/passwd,
// as it would after chroot) and every access goes through os.Root, which
// refuses any symlink or ".." that would lead outside the directory.
//
// A mount serves a directory of the client's tree from another directory
// of the host, e.g. the one store several emulated hosts share, as hosts
// with an NFS home do.
type rootFS struct {
	root   *os.Root
	mounts []mount
	touch  func(name string) // Config.Touch, or nil
}

type mount struct {
	prefix string // relative to the root, cleaned
	root   *os.Root
}

// at maps a client path to the root serving it and a name in that root.
func (r *rootFS) at(p string) (*os.Root, string) {
	name := rel(p)
	if r.touch != nil {
		r.touch(name)
	}
	for _, m := range r.mounts {
		if name == m.prefix {
			return m.root, "."
		}
		if rest, ok := strings.CutPrefix(name, m.prefix+"/"); ok {
			return m.root, rest
		}
	}
	return r.root, name
}

// rel maps a client path to a name relative to the root.
func rel(p string) string {
	r := strings.TrimPrefix(path.Clean("/"+p), "/")
	if r == "" {
		return "."
	}
	return r
}

func (r *rootFS) Fileread(req *sftp.Request) (io.ReaderAt, error) {
	root, name := r.at(req.Filepath)
	return root.Open(name)
}

func (r *rootFS) Filewrite(req *sftp.Request) (io.WriterAt, error) {
	return r.OpenFile(req)
}

// OpenFile serves read-write opens. O_APPEND is never passed to the OS:
// the request server writes at explicit offsets, which O_APPEND forbids.
func (r *rootFS) OpenFile(req *sftp.Request) (sftp.WriterAtReaderAt, error) {
	fl := req.Pflags()
	flags := os.O_WRONLY
	if fl.Read {
		flags = os.O_RDWR
	}
	if fl.Creat {
		flags |= os.O_CREATE
	}
	if fl.Trunc {
		flags |= os.O_TRUNC
	}
	if fl.Excl {
		flags |= os.O_EXCL
	}
	root, name := r.at(req.Filepath)
	return root.OpenFile(name, flags, 0o644)
}

func (r *rootFS) Filecmd(req *sftp.Request) error {
	root, name := r.at(req.Filepath)
	switch req.Method {
	case "Setstat":
		return setstat(root, name, req)
	case "Rename", "PosixRename":
		troot, target := r.at(req.Target)
		if troot != root {
			return fmt.Errorf("rename %s to %s: across mounts", req.Filepath, req.Target)
		}
		return root.Rename(name, target)
	case "Rmdir", "Remove":
		return root.Remove(name)
	case "Mkdir":
		return root.Mkdir(name, 0o755)
	default: // Link, Symlink: an emulated device has no use for them
		return sftp.ErrSSHFxOpUnsupported
	}
}

func setstat(root *os.Root, name string, req *sftp.Request) error {
	fl, a := req.AttrFlags(), req.Attributes()
	if fl.Permissions {
		if err := root.Chmod(name, a.FileMode().Perm()); err != nil {
			return err
		}
	}
	if fl.Size {
		f, err := root.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		err = f.Truncate(int64(a.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if fl.Acmodtime {
		return root.Chtimes(name, a.AccessTime(), a.ModTime())
	}
	return nil // uid/gid: ignored, the emulator runs as one user
}

func (r *rootFS) Filelist(req *sftp.Request) (sftp.ListerAt, error) {
	root, name := r.at(req.Filepath)
	switch req.Method {
	case "List":
		d, err := root.Open(name)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		fis, err := d.Readdir(-1)
		if err != nil {
			return nil, err
		}
		return lister(fis), nil
	case "Stat":
		fi, err := root.Stat(name)
		if err != nil {
			return nil, err
		}
		return lister{fi}, nil
	default: // Readlink
		return nil, sftp.ErrSSHFxOpUnsupported
	}
}

// Lstat reports a symlink itself (even one pointing outside, which can
// then be neither followed nor read through).
func (r *rootFS) Lstat(req *sftp.Request) (sftp.ListerAt, error) {
	root, name := r.at(req.Filepath)
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	return lister{fi}, nil
}

type lister []os.FileInfo

func (l lister) ListAt(out []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(out, l[off:])
	if n < len(out) {
		return n, io.EOF
	}
	return n, nil
}

// openRoot serves dir, with mounts (client path -> directory), calling
// touch (if not nil) with each request's path first.
func openRoot(dir string, mounts map[string]string, touch func(string)) (*rootFS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("sftp root: %w", err)
	}
	fs := &rootFS{root: r, touch: touch}
	for p, d := range mounts {
		m, err := os.OpenRoot(d)
		if err != nil {
			fs.Close()
			return nil, fmt.Errorf("sftp mount %s: %w", p, err)
		}
		fs.mounts = append(fs.mounts, mount{prefix: rel(p), root: m})
	}
	return fs, nil
}

// Close closes the root and its mounts.
func (r *rootFS) Close() {
	r.root.Close()
	for _, m := range r.mounts {
		m.root.Close()
	}
}
