package importrules

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/labctl/labctl"

// pkg is one package of the module as the rules see it.
type pkg struct {
	path    string   // inside the module: "drivers/ssh"
	main    bool     // a command: may import anything
	doc     string   // the package comment
	imports []string // labctl packages imported by its non-test files
	only    []string // "Imports within labctl: only ..."
	none    bool     // "Imports within labctl: none."
	never   []string // "Must not import: ..."
}

var (
	onlyRE  = regexp.MustCompile(`(?s)Imports within labctl: (.*?)\.(\s|$)`)
	neverRE = regexp.MustCompile(`(?s)Must not import: (.*?)\.(\s|$)`)
)

// load reads every package under root: its doc comment and its imports.
func load(t *testing.T, root string) map[string]*pkg {
	t.Helper()
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkg{path: rel}
			pkgs[rel] = p
		}
		p.main = p.main || f.Name.Name == "main"
		if f.Doc != nil {
			p.doc += f.Doc.Text()
		}
		for _, im := range f.Imports {
			ip := strings.Trim(im.Path.Value, `"`)
			if in, ok := strings.CutPrefix(ip, module+"/"); ok && !slices.Contains(p.imports, in) {
				p.imports = append(p.imports, in)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		p.parse()
	}
	return pkgs
}

func (p *pkg) parse() {
	doc := strings.Join(strings.Fields(p.doc), " ")
	if m := onlyRE.FindStringSubmatch(doc); m != nil {
		if rest, ok := strings.CutPrefix(m[1], "only "); ok {
			p.only = names(rest)
		} else if m[1] == "none" {
			p.none = true
		}
	}
	if m := neverRE.FindStringSubmatch(doc); m != nil {
		p.never = names(m[1])
	}
}

func names(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// covers reports whether the rule name covers package path.
func covers(name, path string) bool { return path == name || strings.HasPrefix(path, name+"/") }

// deps is every labctl package p links, directly or through others.
func deps(pkgs map[string]*pkg, p *pkg) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(path string) {
		q, ok := pkgs[path]
		if !ok {
			return
		}
		for _, im := range q.imports {
			if !seen[im] {
				seen[im] = true
				walk(im)
			}
		}
	}
	walk(p.path)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// violations lists every broken rule of every package, and every package
// that states none.
func violations(pkgs map[string]*pkg) []string {
	var out []string
	for _, p := range pkgs {
		if p.main {
			continue
		}
		if p.only == nil && !p.none && p.never == nil {
			out = append(out, fmt.Sprintf("%s: its package comment states no import rule (\"Imports within labctl: ...\" or \"Must not import: ...\")", p.path))
			continue
		}
		for _, n := range append(slices.Clone(p.only), p.never...) {
			if _, ok := pkgs[n]; !ok && !slices.ContainsFunc(keys(pkgs), func(k string) bool { return covers(n, k) }) {
				out = append(out, fmt.Sprintf("%s: its import rule names %q, which is no package of labctl", p.path, n))
			}
		}
		for _, im := range p.imports {
			if p.none || p.only != nil && !slices.ContainsFunc(p.only, func(n string) bool { return covers(n, im) }) {
				out = append(out, fmt.Sprintf("%s imports %s, outside its rule", p.path, im))
			}
		}
		for _, d := range deps(pkgs, p) {
			for _, n := range p.never {
				if covers(n, d) {
					out = append(out, fmt.Sprintf("%s links %s (directly or not), which it must not import", p.path, d))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func keys(m map[string]*pkg) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestEveryPackageKeepsItsImportRule(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	for _, v := range violations(load(t, root)) {
		t.Error(v)
	}
}

// TestRulesCatchViolations checks the checker on a made-up module layout:
// a broken rule of each kind is reported, kept rules are not.
func TestRulesCatchViolations(t *testing.T) {
	t.Parallel()
	mk := func(path, doc string, imports ...string) *pkg {
		p := &pkg{path: path, doc: doc, imports: imports}
		p.parse()
		return p
	}
	pkgs := map[string]*pkg{}
	for _, p := range []*pkg{
		mk("inventory", "Imports within labctl: none."),
		mk("emulator", "Imports within labctl: only inventory, drivers.", "inventory", "drivers/ssh"),
		mk("drivers/ssh", "Imports within labctl: only inventory.", "inventory"),
		mk("reports", "Must not import: emulator.\nSome prose.", "drivers/ssh"),
		mk("scenarios", "Must not import: emulator,\n drivers.", "bridge"),
		mk("bridge", "Imports within labctl: only emulator.", "emulator"),
		mk("fabric", "Imports within labctl: none.", "inventory"),
		mk("silent", "Package silent says nothing of imports."),
		mk("typo", "Must not import: emulater."),
	} {
		pkgs[p.path] = p
	}
	got := violations(pkgs)
	want := []string{
		"fabric imports inventory, outside its rule",
		"scenarios links drivers/ssh (directly or not), which it must not import",
		"scenarios links emulator (directly or not), which it must not import",
		`silent: its package comment states no import rule ("Imports within labctl: ..." or "Must not import: ...")`,
		`typo: its import rule names "emulater", which is no package of labctl`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
