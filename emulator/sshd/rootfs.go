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
type rootFS struct{ root *os.Root }

// rel maps a client path to a name relative to the root.
func rel(p string) string {
	r := strings.TrimPrefix(path.Clean("/"+p), "/")
	if r == "" {
		return "."
	}
	return r
}

func (r *rootFS) Fileread(req *sftp.Request) (io.ReaderAt, error) {
	return r.root.Open(rel(req.Filepath))
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
	return r.root.OpenFile(rel(req.Filepath), flags, 0o644)
}

func (r *rootFS) Filecmd(req *sftp.Request) error {
	name := rel(req.Filepath)
	switch req.Method {
	case "Setstat":
		return r.setstat(name, req)
	case "Rename", "PosixRename":
		return r.root.Rename(name, rel(req.Target))
	case "Rmdir", "Remove":
		return r.root.Remove(name)
	case "Mkdir":
		return r.root.Mkdir(name, 0o755)
	default: // Link, Symlink: an emulated device has no use for them
		return sftp.ErrSSHFxOpUnsupported
	}
}

func (r *rootFS) setstat(name string, req *sftp.Request) error {
	fl, a := req.AttrFlags(), req.Attributes()
	if fl.Permissions {
		if err := r.root.Chmod(name, a.FileMode().Perm()); err != nil {
			return err
		}
	}
	if fl.Size {
		f, err := r.root.OpenFile(name, os.O_WRONLY, 0)
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
		return r.root.Chtimes(name, a.AccessTime(), a.ModTime())
	}
	return nil // uid/gid: ignored, the emulator runs as one user
}

func (r *rootFS) Filelist(req *sftp.Request) (sftp.ListerAt, error) {
	name := rel(req.Filepath)
	switch req.Method {
	case "List":
		d, err := r.root.Open(name)
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
		fi, err := r.root.Stat(name)
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
	fi, err := r.root.Lstat(rel(req.Filepath))
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

func openRoot(dir string) (*rootFS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("sftp root: %w", err)
	}
	return &rootFS{root: r}, nil
}
