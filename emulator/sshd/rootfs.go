package sshd

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkg/sftp"
)

// rootFS serves SFTP requests inside one directory, as a chroot would: every
// path is resolved under root and nothing may lead outside it.
type rootFS struct{ root string }

var errEscape = errors.New("permission denied: path leaves the device root")

// real maps a client path to a path under root, refusing symlinks that
// point outside.
func (r *rootFS) real(p string) (string, error) {
	full := filepath.Join(r.root, filepath.FromSlash(filepath.Clean("/"+p)))
	if res, err := filepath.EvalSymlinks(full); err == nil {
		root, _ := filepath.EvalSymlinks(r.root)
		if res != root && !strings.HasPrefix(res, root+string(filepath.Separator)) {
			return "", errEscape
		}
	}
	return full, nil
}

func (r *rootFS) Fileread(req *sftp.Request) (io.ReaderAt, error) {
	p, err := r.real(req.Filepath)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

func (r *rootFS) Filewrite(req *sftp.Request) (io.WriterAt, error) {
	p, err := r.real(req.Filepath)
	if err != nil {
		return nil, err
	}
	fl := req.Pflags()
	flags := os.O_WRONLY
	if fl.Creat {
		flags |= os.O_CREATE
	}
	if fl.Trunc {
		flags |= os.O_TRUNC
	}
	if fl.Excl {
		flags |= os.O_EXCL
	}
	if fl.Append {
		flags |= os.O_APPEND
	}
	return os.OpenFile(p, flags, 0o644)
}

func (r *rootFS) Filecmd(req *sftp.Request) error {
	p, err := r.real(req.Filepath)
	if err != nil {
		return err
	}
	switch req.Method {
	case "Setstat":
		if req.AttrFlags().Permissions {
			return os.Chmod(p, req.Attributes().FileMode().Perm())
		}
		if req.AttrFlags().Size {
			return os.Truncate(p, int64(req.Attributes().Size))
		}
		return nil
	case "Rename", "PosixRename":
		t, err := r.real(req.Target)
		if err != nil {
			return err
		}
		return os.Rename(p, t)
	case "Rmdir", "Remove":
		return os.Remove(p)
	case "Mkdir":
		return os.Mkdir(p, 0o755)
	default: // Link, Symlink: not on an emulated device
		return sftp.ErrSSHFxOpUnsupported
	}
}

func (r *rootFS) Filelist(req *sftp.Request) (sftp.ListerAt, error) {
	p, err := r.real(req.Filepath)
	if err != nil {
		return nil, err
	}
	switch req.Method {
	case "List":
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var fis []os.FileInfo
		for _, e := range ents {
			if fi, err := e.Info(); err == nil {
				fis = append(fis, fi)
			}
		}
		return lister(fis), nil
	case "Stat", "Lstat":
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		return lister{fi}, nil
	default:
		return nil, sftp.ErrSSHFxOpUnsupported
	}
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
