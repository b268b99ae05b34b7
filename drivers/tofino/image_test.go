package tofino_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/drivers/tofino"
)

const example = "testdata/example-bundle"

// copyBundle copies the example into a temporary directory to spoil.
func copyBundle(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(example)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func validate(t *testing.T, dir string) error {
	t.Helper()
	b, err := tofino.OpenBundle(dir)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.Validate()
}

func TestExampleBundleIsValid(t *testing.T) {
	b, err := tofino.OpenBundle(example)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	m := b.Manifest
	if m.Ref() != "drill-lb@1.0.0" || m.Target != "tofino" || m.Program != "drill_lb" ||
		m.LB.Scheme != "drill" || m.LB.Params["d"] != "2" || m.LB.Params["m"] != "1" || len(m.Files) != 4 {
		t.Fatalf("manifest: %+v", m)
	}
}

// TestValidateFindsEachProblem: every spoiled bundle is refused with the
// manifest's file:line: field and what is wrong.
func TestValidateFindsEachProblem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(dir string)
		want  string // in the error, after the bundle dir
	}{
		{"tampered artifact", func(d string) {
			os.WriteFile(filepath.Join(d, "pipe", "tofino.bin"), []byte("patched after the manifest was written\n"), 0o644)
		}, "image.yaml:24: files[2].sha256: pipe/tofino.bin has sha256 "},
		{"missing file", func(d string) { os.Remove(filepath.Join(d, "pipe", "context.json")) },
			"image.yaml:21: files[1].path: pipe/context.json is not in the bundle"},
		{"unlisted file", func(d string) { os.WriteFile(filepath.Join(d, "notes.txt"), []byte("x"), 0o644) },
			"image.yaml:18: files: notes.txt is in the bundle but not listed"},
		{"bad target", func(d string) { edit(d, "target: tofino\n", "target: tofino3\n") },
			`image.yaml:11: target: "tofino3": want tofino or tofino2`},
		{"unknown field", func(d string) { edit(d, "program: drill_lb\n", "program: drill_lb\nprogramme: x\n") },
			"image.yaml:13: programme: unknown field (known here: name, version, target, program, lb, files)"},
		{"bad sha256", func(d string) { edit(d, "sha256: d5d9", "sha256: D5D9") },
			`image.yaml:20: files[0].sha256: "D5D9`},
		{"path escaping the bundle", func(d string) { edit(d, "path: bf-rt.json", "path: ../bf-rt.json") },
			`image.yaml:19: files[0].path: "../bf-rt.json": want a clean path`},
		{"conf for another program", func(d string) {
			conf := filepath.Join(d, "drill_lb.conf")
			b, _ := os.ReadFile(conf)
			b = bytes.Replace(b, []byte(`"program-name": "drill_lb"`), []byte(`"program-name": "other"`), 1)
			os.WriteFile(conf, b, 0o644)
			sum, _ := sshdrv.FileSHA256(conf)
			edit(d, "ca6339b05ab7d487dacfa93e33a7a22c57595a54a24526e5f9d30baa64014069", sum)
		}, "image.yaml:12: program: drill_lb.conf loads program other, not drill_lb"},
		{"no conf listed", func(d string) { edit(d, "program: drill_lb\n", "program: ecmp_lb\n") },
			"image.yaml:18: files: the bf_switchd conf ecmp_lb.conf is not listed"},
		{"binary of the wrong chip", func(d string) { edit(d, "target: tofino\n", "target: tofino2\n") },
			"image.yaml:11: target: drill_lb.conf loads pipe/tofino.bin (p4_devices[0].p4_programs[0].p4_pipelines[0].config); target tofino2 needs tofino2.bin"},
		{"no lb scheme", func(d string) { edit(d, "scheme: drill", "scheme: \"\"") },
			`image.yaml:14: lb.scheme: "": want the load-balancing scheme`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyBundle(t)
			tc.spoil(dir)
			err := validate(t, dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tc.want)) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

// edit replaces old by new in a bundle's manifest, keeping its line count
// so the expected lines stay put.
func edit(dir, old, new string) {
	p := filepath.Join(dir, tofino.ManifestFile)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

func TestBundleFromTarGz(t *testing.T) {
	tgz := func(entries map[string][]byte) string {
		p := filepath.Join(t.TempDir(), "b.tar.gz")
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for name, data := range entries {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
			tw.Write(data)
		}
		tw.Close()
		zw.Close()
		os.WriteFile(p, buf.Bytes(), 0o644)
		return p
	}
	files := map[string][]byte{}
	for _, f := range []string{"image.yaml", "bf-rt.json", "pipe/context.json", "pipe/tofino.bin", "drill_lb.conf"} {
		b, err := os.ReadFile(filepath.Join(example, f))
		if err != nil {
			t.Fatal(err)
		}
		files["drill-lb-1.0.0/"+f] = b // wrapped in one top-level directory
	}
	b, err := tofino.OpenBundle(tgz(files))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	dir := b.Dir
	b.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left the unpacked bundle at %s", dir)
	}
	if _, err := tofino.OpenBundle(tgz(map[string][]byte{"../escape": []byte("x")})); err == nil || !strings.Contains(err.Error(), "unsafe path") {
		t.Errorf("an archive writing outside its directory: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	if n, v, err := tofino.ParseRef("drill-lb@1.0.0"); err != nil || n != "drill-lb" || v != "1.0.0" {
		t.Fatal(n, v, err)
	}
	for _, bad := range []string{"drill-lb", "@1", "x@", "../x@1", "x@../1", "X@1"} {
		if _, _, err := tofino.ParseRef(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestInstallConfMakesArtifactPathsAbsolute(t *testing.T) {
	raw, _ := os.ReadFile(filepath.Join(example, "drill_lb.conf"))
	out, err := tofino.InstallConf(raw, "/opt/labctl/images/drill-lb/1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := tofino.ParseConf(out)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Programs[0]
	if p.BFRT != "/opt/labctl/images/drill-lb/1.0.0/bf-rt.json" || p.Pipelines[0].Context != "/opt/labctl/images/drill-lb/1.0.0/pipe/context.json" ||
		p.Pipelines[0].Config != "/opt/labctl/images/drill-lb/1.0.0/pipe/tofino.bin" {
		t.Errorf("artifacts: %+v", p)
	}
	if !bytes.Contains(out, []byte(`"agent0": "lib/libpltfm_mgr.so"`)) || !bytes.Contains(out, []byte(`"sds_fw_path": "share/tofino_sds_fw/avago/firmware"`)) {
		t.Errorf("SDE paths must stay relative to --install-dir:\n%s", out)
	}
	again, _ := tofino.InstallConf(raw, "/opt/labctl/images/drill-lb/1.0.0")
	if !bytes.Equal(out, again) {
		t.Error("InstallConf is not deterministic")
	}
}

func TestParseConfLegacyForm(t *testing.T) {
	// the legacy p4_program_list form (hardware-surfaces 3.1)
	c, err := tofino.ParseConf([]byte(`{"chip_list": [{"chip_family": "Tofino", "instance": 0}], "instance": 0,
		"p4_program_list": [{"id": "pgm-0", "instance": 0, "path": "switch", "program-name": "switch",
		"pd": "lib/tofinopd/switch/libpd.so", "pd-thrift": "lib/tofinopd/switch/libpdthrift.so",
		"table-config": "share/tofinopd/switch/context.json", "tofino-bin": "share/tofinopd/switch/tofino.bin",
		"bfrt-config": "share/tofinopd/switch/bf-rt.json", "agent0": "lib/libpltfm_mgr.so"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	arts := c.Artifacts()
	if c.ProgramNames()[0] != "switch" || len(arts) != 3 || arts[1].Field != "p4_program_list[0].table-config" ||
		arts[2].Path != "share/tofinopd/switch/tofino.bin" {
		t.Fatalf("%+v %+v", c, arts)
	}
	if _, err := tofino.ParseConf([]byte(`{"chip_list": []}`)); err == nil {
		t.Error("a conf with no program accepted")
	}
}

func TestParseSHA256Sum(t *testing.T) {
	// coreutils 9 output: text mode, binary mode, an escaped name
	out := "d5d9bc3538880d702e4482216e1c45563bad24772dfd88499a6a141780d1c6c4  /opt/labctl/images/drill-lb/1.0.0/bf-rt.json\n" +
		"7a881a452914766ee7817f6555b62cce4bcea71d2ed629b9c2d02363072f47d3 *pipe/context.json\n" +
		`\c7444d250cd97a8d72373649eb8ac77e3be476c4d75328468c6225bb8cf3c30a  odd\\name\nwith newline` + "\n"
	got, err := tofino.ParseSHA256Sum([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["/opt/labctl/images/drill-lb/1.0.0/bf-rt.json"][:4] != "d5d9" ||
		got["pipe/context.json"][:4] != "7a88" || got["odd\\name\nwith newline"][:4] != "c744" {
		t.Fatalf("%q", got)
	}
	for _, bad := range []string{"d5d9  short\n", strings.Repeat("g", 64) + "  x\n", strings.Repeat("a", 64) + "x\n",
		`\` + strings.Repeat("a", 64) + `  bad\q` + "\n"} {
		if _, err := tofino.ParseSHA256Sum([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseSwitchdLog(t *testing.T) {
	for _, tc := range []struct {
		file, program string
		background    bool
	}{
		{"testdata/switchd-sde9.7.log", "netclone", false},
		{"testdata/switchd-sde9.13-background.log", "lucid", true},
	} {
		b, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		l := tofino.ParseSwitchdLog(b)
		if !l.Loaded(tc.program) || !l.Ready || l.Devices != 1 || l.Loaded("other") || !strings.HasSuffix(l.ConfFile, tc.program+".conf") {
			t.Errorf("%s: %+v", tc.file, l)
		}
		// cut before "initialized 1 devices": not loaded yet
		cut := b[:bytes.Index(b, []byte("initialized 1 devices"))]
		if l := tofino.ParseSwitchdLog(cut); l.Loaded(tc.program) || l.Devices != -1 || l.Ready {
			t.Errorf("%s cut short: %+v", tc.file, l)
		}
	}
}

// TestSwitchdFormatIsWhatTheParserReads: the emulated bf_switchd prints
// through FormatSwitchdStart.
func TestSwitchdFormatIsWhatTheParserReads(t *testing.T) {
	prog := tofino.ConfProgram{Name: "drill_lb", Pipelines: []tofino.ConfPipeline{{Name: "pipe", Context: "/x/pipe/context.json",
		Config: "/x/pipe/tofino.bin", Scope: []int{0, 1, 2, 3}}}}
	for _, devices := range []int{1, 0} {
		var b bytes.Buffer
		s := tofino.SwitchdStart{InstallDir: "/opt/bf-sde/install", ConfFile: "/x/labctl-switchd.conf", Family: "tofino",
			Programs: []tofino.ConfProgram{prog}, Agent: "/opt/bf-sde/install/lib/libpltfm_mgr.so", Devices: devices, Background: true}
		if devices == 0 {
			s.Error = "ERROR: device add failed"
		}
		if err := tofino.FormatSwitchdStart(&b, s); err != nil {
			t.Fatal(err)
		}
		l := tofino.ParseSwitchdLog(b.Bytes())
		if l.Loaded("drill_lb") != (devices == 1) || l.Devices != devices || l.ConfFile != "/x/labctl-switchd.conf" || !l.Ready {
			t.Errorf("devices %d: %+v\n%s", devices, l, b.String())
		}
		if !strings.Contains(b.String(), "  Pipes in scope [0 1 2 3 ]\n") ||
			!strings.Contains(b.String(), "bf_switchd: running in background; driver shell is disabled\n") {
			t.Errorf("format differs from the SDE's:\n%s", b.String())
		}
	}
}
