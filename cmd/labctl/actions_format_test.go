package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// jsonObject decodes one line of --format json output that must be a
// single JSON object.
func jsonObject(t *testing.T, what, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s --format json: %v: %q", what, err, out)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("%s --format json: not one line: %q", what, out)
	}
	return m
}

// hasFields checks that m holds every field of want with that value (a
// nil value: only that the field is there).
func hasFields(t *testing.T, what string, m map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("%s: JSON lacks %q: %v", what, k, m)
			continue
		}
		if v != nil && fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("%s: %q is %v, want %v", what, k, got, v)
		}
	}
}

// The verbs that act on an emulated lab print what they did as one JSON
// object (lab up, lab fault inject and clear) or array (lab down) with
// --format json, a Markdown table with md, and by default the sentences
// they always printed; inventory ansible prints the same inventory as
// JSON as it does as YAML.
func TestLabActionsFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	const lab = "leafspine:1x1:2@100" // 1 spine, 1 leaf, 2 hosts: 2x(ssh+gnmi) + 2 ssh
	home := t.TempDir()
	t.Cleanup(func() { labctl(t, home, "lab", "down") })

	out, stderr, err := labctl(t, home, "lab", "up", lab)
	if err != nil {
		t.Fatalf("lab up: %v\n%s", err, stderr)
	}
	upText := regexp.MustCompile(`^lab ` + regexp.QuoteMeta(lab) + ` up \(pid [0-9]+\)\nlab file: /\S+/lab\.yaml\nuse it: labctl run SCENARIO --lab ` + regexp.QuoteMeta(lab) + "\n$")
	if !upText.MatchString(out) {
		t.Errorf("lab up's default output changed: %q", out)
	}
	if out, _, err := labctl(t, home, "lab", "down", lab); err != nil || out != "lab "+lab+" down\n" {
		t.Fatalf("lab down's default output: %v %q", err, out)
	}

	out, stderr, err = labctl(t, home, "lab", "up", lab, "--format", "json")
	if err != nil {
		t.Fatalf("lab up --format json: %v\n%s", err, stderr)
	}
	up := jsonObject(t, "lab up", out)
	hasFields(t, "lab up", up, map[string]any{"lab": lab, "endpoints": 6, "pid": nil, "lab_file": nil})
	if f, _ := up["lab_file"].(string); f == "" {
		t.Errorf("lab up: lab_file %v", up["lab_file"])
	} else if _, err := os.Stat(f); err != nil {
		t.Errorf("lab up: lab_file: %v", err)
	}
	if pid, _ := up["pid"].(float64); pid <= 0 {
		t.Errorf("lab up: pid %v", up["pid"])
	}

	for _, tc := range []struct {
		args []string
		want map[string]any
		msg  string
	}{
		{[]string{"h1", "drop-ssh", "--for", "1s"}, map[string]any{"lab": lab, "device": "h1", "fault": "drop-ssh", "state": "injected"}, "h1: ssh dropped until"},
		{[]string{"h1", "clear"}, map[string]any{"lab": lab, "device": "h1", "fault": "clear", "state": "cleared"}, "h1"},
	} {
		what := "lab fault " + strings.Join(tc.args, " ")
		out, stderr, err := labctl(t, home, append(append([]string{"lab", "fault", lab}, tc.args...), "--format", "json")...)
		if err != nil {
			t.Errorf("%s: %v %s", what, err, stderr)
			continue
		}
		m := jsonObject(t, what, out)
		hasFields(t, what, m, tc.want)
		if msg, _ := m["message"].(string); !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: message %q lacks %q", what, msg, tc.msg)
		}
	}
	out, _, err = labctl(t, home, "lab", "fault", lab, "h2", "clear", "--format", "md")
	if err != nil || !strings.HasPrefix(out, "| LAB | DEVICE | FAULT | STATE | MESSAGE |\n| --- |") || !strings.Contains(out, "| h2 | clear | cleared |") {
		t.Errorf("lab fault --format md: %v %q", err, out)
	}
	if _, stderr, err := labctl(t, home, "lab", "fault", lab, "h2", "clear", "--format", "xml"); !isExit(err, 2) || !strings.Contains(stderr, "known formats: table, json, md") {
		t.Errorf("lab fault --format xml: %v %q", err, stderr)
	}

	yml, _, err := labctl(t, home, "inventory", "ansible", lab)
	if err != nil {
		t.Fatal(err)
	}
	js, _, err := labctl(t, home, "inventory", "ansible", lab, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML, fromJSON map[string]any
	if err := yaml.Unmarshal([]byte(yml), &fromYAML); err != nil {
		t.Fatalf("inventory ansible's default output is not YAML: %v", err)
	}
	if err := json.Unmarshal([]byte(js), &fromJSON); err != nil {
		t.Fatalf("inventory ansible --format json: %v: %q", err, js)
	}
	// YAML decodes numbers as int, JSON as float64: compare as JSON
	a, _ := json.Marshal(fromYAML)
	b, _ := json.Marshal(fromJSON)
	if string(a) != string(b) || !strings.Contains(js, `"rdma_hosts":{"hosts":{"h1":`) {
		t.Errorf("inventory ansible: JSON and YAML inventories differ:\n%s\n%s", a, b)
	}
	md, _, err := labctl(t, home, "inventory", "ansible", lab, "--format", "md")
	if err != nil || !strings.HasPrefix(md, "| DEVICE | GROUP | SSH |") || !strings.Contains(md, "| h1 | rdma_hosts | 127.0.0.1:") {
		t.Errorf("inventory ansible --format md: %v %q", err, md)
	}

	out, stderr, err = labctl(t, home, "lab", "down", "--format", "json")
	if err != nil {
		t.Fatalf("lab down --format json: %v %s", err, stderr)
	}
	var downs []map[string]any
	if err := json.Unmarshal([]byte(out), &downs); err != nil || len(downs) != 1 {
		t.Fatalf("lab down --format json: want an array of one lab: %v %q", err, out)
	}
	hasFields(t, "lab down", downs[0], map[string]any{"lab": lab, "was_running": true})
}

func isExit(err error, code int) bool {
	ee, ok := err.(*exec.ExitError)
	return ok && ee.ExitCode() == code
}

// lab reserve and release print what they did with --format json (who
// holds the lab until when; whether a lease was released and whose) and
// by default the sentences they always printed.
func TestReserveReleaseFormat(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	labFile := hardwareLabFile(t)
	q := regexp.QuoteMeta(labFile)
	type step struct {
		args []string
		text *regexp.Regexp // default output, whole
		want map[string]any // --format json fields
		md   string         // --format md's first line
	}
	for _, s := range []step{
		{args: []string{"reserve", labFile, "--for", "1h", "--note", "sweep"},
			text: regexp.MustCompile(`^lab ` + q + ` reserved by \S+@\S+ until \S+\n$`)},
		{args: []string{"reserve", labFile, "--for", "1h", "--note", "sweep", "--format", "json"},
			want: map[string]any{"lab": labFile, "held_by": nil, "expires": nil, "note": "sweep"}},
		{args: []string{"reserve", labFile, "--for", "1h", "--format", "md"}, md: "| LAB | HELD BY | UNTIL | NOTE |"},
		{args: []string{"release", labFile, "--format", "json"},
			want: map[string]any{"lab": labFile, "released": true, "was_held_by": nil}},
		{args: []string{"release", labFile, "--format", "json"}, want: map[string]any{"lab": labFile, "released": false}},
		{args: []string{"release", labFile}, text: regexp.MustCompile(`^lab ` + q + ` is not held\n$`)},
		{args: []string{"reserve", labFile}, text: regexp.MustCompile(`^lab ` + q + ` reserved by `)},
		{args: []string{"release", labFile}, text: regexp.MustCompile(`^lab ` + q + ` released \(was held by \S+@\S+\)\n$`)},
	} {
		what := "lab " + strings.Join(s.args, " ")
		out, stderr, err := labctl(t, home, append([]string{"lab"}, s.args...)...)
		if err != nil {
			t.Fatalf("%s: %v %s", what, err, stderr)
		}
		switch {
		case s.text != nil && !s.text.MatchString(out):
			t.Errorf("%s: default output %q, want %s", what, out, s.text)
		case s.md != "" && !strings.HasPrefix(out, s.md+"\n| --- |"):
			t.Errorf("%s: %q, want a Markdown table under %q", what, out, s.md)
		case s.want != nil:
			m := jsonObject(t, what, out)
			hasFields(t, what, m, s.want)
			if e, ok := m["expires"].(string); ok {
				if at, err := time.Parse(time.RFC3339, e); err != nil || time.Until(at) < 59*time.Minute || time.Until(at) > time.Hour {
					t.Errorf("%s: expires %q, want in an hour: %v", what, e, err)
				}
			}
			if h, ok := m["held_by"].(string); ok && !strings.Contains(h, "@") {
				t.Errorf("%s: held_by %q, want user@host", what, h)
			}
			if h, ok := m["was_held_by"]; ok && !strings.Contains(fmt.Sprint(h), "@") {
				t.Errorf("%s: was_held_by %q, want user@host", what, h)
			}
		}
	}
}
