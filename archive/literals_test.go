package archive

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// archiveNames are the run directory's file names; only this package may
// spell them.
var archiveNames = map[string]bool{
	"manifest.json": true, "plan.json": true, "executor.json": true, "flows.csv": true, "flows.csv.tmp": true,
	"summary.json": true, "report.html": true, "report.json": true, "schedule.json": true,
	"*.lp": true, ".lp": true, ".agent.log": true, "jobs.jsonl": true, "%A_%a.out": true,
	"switch-profile.yaml": true, "rnic-profile.yaml": true,
	"image-plan.json": true, "image-apply.json": true, "image-readback.json": true,
	"switch-plan.json": true, "switch-apply.json": true, "switch-readback.json": true,
	"rnic-plan.json": true, "rnic-apply.json": true, "rnic-readback.json": true,
}

// archiveDirs are the run directory's subdirectories: a path join naming
// one outside this package spells the layout.
var archiveDirs = map[string]bool{"raw": true, "telemetry": true, "provision": true, "points": true, "spool": true, "slurm": true}

// allowed are literals that look like the archive's but are another
// format's own, by file.
var allowed = map[string]string{
	"collectors/spool.go:.lp": "the InfluxDB spool's segment files (collectors' format, in Dir.Spool)",
}

// TestNoArchiveLiterals keeps the rule that archive is the only package
// that knows the run directory: no other non-test Go file of the module
// has a string literal naming one of its files, or joins a path with one
// of its subdirectories.
func TestNoArchiveLiterals(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel == "archive" || e.Name() == "testdata" || (strings.HasPrefix(e.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, ok := stringLit(n); ok && archiveNames[s] && allowed[rel+":"+s] == "" {
					t.Errorf("%s: %q names a run-directory file: use the archive package", fset.Position(n.Pos()), s)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Join" {
					return true
				}
				for _, a := range n.Args {
					if lit, ok := a.(*ast.BasicLit); ok {
						if s, ok := stringLit(lit); ok && archiveDirs[s] {
							t.Errorf("%s: joins %q, a run-directory subdirectory: use the archive package", fset.Position(lit.Pos()), s)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files under %s: the walk is broken", checked, root)
	}
}

func stringLit(l *ast.BasicLit) (string, bool) {
	if l.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(l.Value)
	return s, err == nil
}
