package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/labctl/labctl/drivers/connectx"
	"github.com/labctl/labctl/drivers/tofino"
	"github.com/labctl/labctl/internal/suggest"
	"github.com/labctl/labctl/internal/yamlpos"
	"github.com/labctl/labctl/provision"
)

// fileChecks loads, once per file, the image bundle and profiles that
// variants name, as their provision step would, so that a missing or
// broken file is refused at the scenario's line before a run directory
// exists or a device is touched. A file a matrix sweeps is left to its
// variants: one that fails to provision is a failed point of a partial
// run, as matrices record failures.
type fileChecks struct {
	root    *Scenario // the scenario as written, with its matrix
	schemes tofino.SchemeCheck
	done    map[string]error // by field and resolved path
}

// swept says whether the matrix sweeps field, or a section holding it.
func (fc *fileChecks) swept(field string) bool {
	for _, w := range fc.root.Matrix {
		if within(w.Path, field) || within(field, w.Path) {
			return true
		}
	}
	return false
}

// check checks s's files; withSchemes checks an image's load-balancing
// scheme against the twin's too (a variant on an emulated lab).
func (fc *fileChecks) check(s *Scenario, ps *yamlpos.Problems, withSchemes bool) {
	p := s.Provision
	fc.one(s, ps, "provision.switch_profile", p.SwitchProfile, func(f string) error {
		_, err := provision.LoadQoSProfile(f)
		return err
	})
	fc.one(s, ps, "provision.rnic_profile", p.RNICProfile, func(f string) error {
		_, err := connectx.LoadProfile(f)
		return err
	})
	withSchemes = withSchemes && fc.schemes != nil
	fc.one(s, ps, fmt.Sprintf("provision.image/%t", withSchemes), p.Image, func(f string) error {
		b, err := tofino.OpenBundle(f)
		if err != nil {
			return err
		}
		defer b.Close()
		if withSchemes {
			return b.Validate(fc.schemes)
		}
		return b.Validate()
	})
}

// one checks file with load, unless key (the field, and how it is
// checked after a "/") saw the same path before.
func (fc *fileChecks) one(s *Scenario, ps *yamlpos.Problems, key, file string, load func(string) error) {
	field, _, _ := strings.Cut(key, "/")
	if file == "" || fc.swept(field) {
		return
	}
	path := s.resolve(file)
	key += "\x00" + path
	err, seen := fc.done[key]
	if !seen {
		if _, serr := os.Stat(path); serr != nil {
			err = fmt.Errorf("%s: no such file or directory%s", path, didYouMean(path))
		} else {
			err = load(path)
		}
		if fc.done == nil {
			fc.done = map[string]error{}
		}
		fc.done[key] = err
	}
	if err != nil {
		s.ix.Add(ps, field, "%v", err)
	}
}

// didYouMean names the entry of path's directory nearest its base name
// (within a third of its length in edits), as ` (did you mean "x"?)`.
func didYouMean(path string) string {
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return ""
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = filepath.Join(filepath.Dir(path), e.Name())
	}
	return suggest.DidYouMean(path, names, len(filepath.Base(path))/3+1)
}
