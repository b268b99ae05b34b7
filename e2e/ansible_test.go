package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/drivers/connectx"
	sshdrv "github.com/labctl/labctl/drivers/ssh"
	"github.com/labctl/labctl/emulator"
	"github.com/labctl/labctl/internal/testlab"
	"github.com/labctl/labctl/internal/testsshd"
	"github.com/labctl/labctl/inventory"
	"github.com/labctl/labctl/perftest/agent"
)

const playbooks = "../ansible/playbooks"

// ansiblePlaybook is Debian's ansible-playbook, or the test skips saying
// why (scripts/test.sh installs the ansible package).
func ansiblePlaybook(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ansible-playbook")
	if err != nil {
		t.Skip("ansible-playbook not installed (Debian ansible; scripts/test.sh installs it)")
	}
	return p
}

// writeAnsibleInventory writes lab as labctl's Ansible inventory.
func writeAnsibleInventory(t *testing.T, lab *inventory.Lab) string {
	t.Helper()
	var b bytes.Buffer
	if err := inventory.WriteAnsible(&b, lab); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "hosts.yml")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// playbook runs ansible-playbook on inv with args and returns its output
// and error. Ansible's own state (SSH control sockets, temporary files)
// stays in the test's directory.
func playbook(t *testing.T, inv string, args ...string) (string, error) {
	t.Helper()
	state := t.TempDir()
	// an empty configuration: no ansible.cfg of the machine or user applies
	cfg := filepath.Join(state, "ansible.cfg")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ansiblePlaybook(t), append([]string{"-i", inv}, args...)...)
	cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0", "ANSIBLE_CONFIG="+cfg,
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(state, "tmp"), "ANSIBLE_SSH_CONTROL_PATH_DIR="+filepath.Join(state, "cp"),
		"ANSIBLE_REMOTE_TEMP="+filepath.Join(state, "remote"), "ANSIBLE_HOST_KEY_CHECKING=True", "ANSIBLE_RETRY_FILES_ENABLED=False", "ANSIBLE_PYTHON_INTERPRETER=auto_silent", "ANSIBLE_PIPELINING=True")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// recap is a host's line of the PLAY RECAP: ok, changed, unreachable,
// failed, skipped.
func recap(t *testing.T, out, host string) map[string]int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(host)+`\s*:\s*(.*)$`).FindAllStringSubmatch(out, -1)
	if m == nil {
		t.Fatalf("no PLAY RECAP line for %s:\n%s", host, out)
	}
	r := map[string]int{}
	for _, f := range strings.Fields(m[len(m)-1][1]) {
		var k string
		var v int
		if _, err := fmt.Sscanf(strings.Replace(f, "=", " ", 1), "%s %d", &k, &v); err == nil {
			r[k] = v
		}
	}
	return r
}

// taskResult is what the output says a task did on host: "ok",
// "changed", "skipping", "failed" (its first line for host), or "".
func taskResult(out, task, host string) string {
	i := strings.Index(out, "TASK ["+task+"]")
	if i < 0 {
		return ""
	}
	block := out[i+len("TASK ["+task+"]"):]
	if j := strings.Index(block, "\nTASK ["); j >= 0 {
		block = block[:j]
	}
	if j := strings.Index(block, "\nPLAY RECAP"); j >= 0 {
		block = block[:j]
	}
	m := regexp.MustCompile(`(?m)^(ok|changed|skipping|failed|fatal): \[` + regexp.QuoteMeta(host) + `( -> [^\]]+)?\]`).FindStringSubmatch(block)
	if m == nil {
		return ""
	}
	return m[1]
}

// playbookTasks reads a playbook's tasks: name and tags.
type playTask struct {
	Name string
	Tags []string
}

func playbookTasks(t *testing.T, file string) []playTask {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(playbooks, file))
	if err != nil {
		t.Fatal(err)
	}
	var plays []struct{ Tasks []playTask }
	if err := yaml.Unmarshal(b, &plays); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var ts []playTask
	for _, p := range plays {
		ts = append(ts, p.Tasks...)
	}
	return ts
}

func hasTag(tags []string, tag string) bool {
	for _, x := range tags {
		if x == tag {
			return true
		}
	}
	return false
}

// TestAnsiblePlaybooksSyntax: ansible-playbook --syntax-check accepts every
// shipped playbook, with the inventory labctl writes for the example lab.
func TestAnsiblePlaybooksSyntax(t *testing.T) {
	t.Parallel()
	ansiblePlaybook(t)
	lab, err := inventory.Resolve("../inventory/testdata/example-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv := writeAnsibleInventory(t, lab)
	files, _ := filepath.Glob(filepath.Join(playbooks, "*.yml"))
	if len(files) < 4 {
		t.Fatalf("%d playbooks in %s", len(files), playbooks)
	}
	// one ansible-playbook for all: it checks each and names the one that fails
	out, err := playbook(t, inv, append([]string{"--syntax-check"}, files...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, f := range files {
		if !strings.Contains(out, "playbook: "+f) {
			t.Errorf("%s was not checked:\n%s", f, out)
		}
	}
}

// TestAnsibleAgentPathIsLabctls: the agent playbook installs where runs
// look for the agent (perftest/agent's layout), in the login user's home.
func TestAnsibleAgentPathIsLabctls(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(playbooks, "agent.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var plays []struct{ Vars map[string]string }
	if err := yaml.Unmarshal(b, &plays); err != nil {
		t.Fatal(err)
	}
	if got, want := plays[0].Vars["labctl_dir"], "~/"+agent.HomeDir; got != want {
		t.Errorf("agent.yml labctl_dir = %q, want %q", got, want)
	}
	if !strings.Contains(string(b), `{{ labctl_dir }}/agent/{{ agent_bin.stat.checksum }}/labctl-agent`) ||
		agent.BinaryPath("SUM") != agent.HomeDir+"/agent/SUM/"+agent.BinaryName {
		t.Errorf("agent.yml's destination is not perftest/agent.BinaryPath (%s)", agent.BinaryPath("<sha256>"))
	}
}

// TestAnsibleAgainstLoopbackSSHD runs the host preparation against a real
// OpenSSH server on loopback (this machine, as the current user), through
// the inventory labctl writes for a lab file naming it:
//   - prepare-hosts.yml in check mode: it succeeds, every task tagged
//     hardware is shown skipped (there is no RNIC here; rnic_hardware=false),
//     the packages and sysctl tasks report what they would change, and
//     nothing was written (the sysctl file is not created);
//   - agent.yml for real, into a test directory: the agent lands under its
//     SHA-256 with mode 0755 in a 0700 directory, and a second run changes
//     nothing.
func TestAnsibleAgainstLoopbackSSHD(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	ansiblePlaybook(t)
	srv := testsshd.Start(t)
	dir := t.TempDir()
	lab := &inventory.Lab{Name: "loopback", KnownHosts: srv.KnownHosts,
		Credentials: map[string]inventory.Credential{"default": {User: srv.User, KeyFile: srv.KeyFile}},
		Hosts: []inventory.Host{{Name: "h1", Mgmt: inventory.Mgmt{SSH: srv.Addr()},
			RNICs: []inventory.RNIC{{Device: "mlx5_0", Netdev: "ens1f0", IP: "10.0.0.1", GIDIndex: 3, SpeedGbps: 100}}}}}
	// through a lab file, as a user would: written, loaded back
	file := filepath.Join(dir, "lab.yaml")
	if err := inventory.WriteFile(file, lab); err != nil {
		t.Fatal(err)
	}
	lab, err := inventory.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	inv := writeAnsibleInventory(t, lab)

	bin := filepath.Join(dir, agent.BinaryName)
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho labctl-agent test build\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("#!/bin/sh\necho labctl-agent test build\n"))
	labctlDir := filepath.Join(dir, "home", agent.HomeDir)
	vars := []string{"-e", "labctl_agent=" + bin, "-e", "labctl_dir=" + labctlDir, "-e", "rnic_hardware=false"}
	if os.Geteuid() == 0 {
		vars = append(vars, "-e", "ansible_become=false") // root needs no sudo (and a container has none)
	}
	t.Run("prepare-hosts check mode", func(t *testing.T) { checkPrepareHosts(t, inv, labctlDir, vars) })

	// The agent, for real.
	for run := 1; run <= 2; run++ {
		out, err := playbook(t, inv, append([]string{filepath.Join(playbooks, "agent.yml")}, vars...)...)
		if err != nil {
			t.Fatalf("agent.yml run %d: %v\n%s", run, err, out)
		}
		r := recap(t, out, "h1")
		if r["failed"] != 0 || (run == 1 && r["changed"] != 3) || (run == 2 && r["changed"] != 0) {
			t.Errorf("agent.yml run %d: recap %v, want 3 changes on the first run and none on the second\n%s", run, r, out)
		}
	}
	dst := filepath.Join(labctlDir, "agent", hex.EncodeToString(sum[:]), agent.BinaryName)
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatalf("the agent is not where runs look for it: %v", err)
	}
	if h := sha256.Sum256(got); h != sum {
		t.Errorf("%s: sha256 %x, want %x", dst, h, sum)
	}
	for p, mode := range map[string]os.FileMode{labctlDir: 0o700 | os.ModeDir, dst: 0o755} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != mode {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode(), err, mode)
		}
	}
}

// TestAnsibleAgainstEmulatedLab runs rnic-qos.yml (raw tasks only: no
// Python on the hosts) against an emulated lab's hosts through the
// inventory labctl writes for it, and reads the settings back with
// labctl's own RNIC parsers: trust dscp, PFC on priority 3, ECN enabled on
// priority 3 at both points (turned off before), RoCE ToS 106. Then a
// host's PFC is changed behind the playbook's back and its read-back
// check fails, naming the host.
func TestAnsibleAgainstEmulatedLab(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Parallel()
	ansiblePlaybook(t)
	_, lab, pool := testlab.Start(t, "leafspine:1x1:2", nil, emulator.Options{Seed: 1}, sshdrv.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(h, cmd string) string {
		t.Helper()
		res, err := pool.Exec(ctx, testlab.Target(t, lab, h, sshdrv.EndpointSSH), cmd)
		if err == nil {
			err = res.Err()
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", h, cmd, err)
		}
		return string(res.Stdout)
	}
	ecn := func(netdev, point string) string { return "/sys/class/net/" + netdev + "/ecn/" + point + "/enable/3" }
	for _, h := range lab.Hosts {
		for _, point := range []string{"roce_np", "roce_rp"} {
			run(h.Name, "echo 0 > "+ecn(h.RNICs[0].Netdev, point))
		}
	}
	inv := writeAnsibleInventory(t, lab)
	out, err := playbook(t, inv, filepath.Join(playbooks, "rnic-qos.yml"))
	if err != nil {
		t.Fatalf("rnic-qos.yml: %v\n%s", err, out)
	}
	for _, h := range lab.Hosts {
		if r := recap(t, out, h.Name); r["failed"] != 0 || r["skipped"] != 0 || r["changed"] == 0 {
			t.Errorf("%s: recap %v", h.Name, r)
		}
		nd, dev := h.RNICs[0].Netdev, h.RNICs[0].Device
		q, err := connectx.ParseMlnxQoS(run(h.Name, "mlnx_qos -i "+nd))
		if err != nil {
			t.Fatal(err)
		}
		if q.Trust != "dscp" || q.PFCEnabled != [8]bool{3: true} {
			t.Errorf("%s %s: trust %s, PFC %v after the playbook", h.Name, nd, q.Trust, q.PFCEnabled)
		}
		for _, point := range []string{"roce_np", "roce_rp"} {
			if v := strings.TrimSpace(run(h.Name, "cat "+ecn(nd, point))); v != "1" {
				t.Errorf("%s: %s = %s after the playbook, want 1", h.Name, ecn(nd, point), v)
			}
		}
		if tos, err := connectx.ParseRoCETOS(run(h.Name, "cma_roce_tos -d "+dev)); err != nil || tos != 106 {
			t.Errorf("%s: RoCE ToS %d (%v), want 106", h.Name, tos, err)
		}
	}

	h := lab.Hosts[0].Name
	run(h, "mlnx_qos -i "+lab.Hosts[0].RNICs[0].Netdev+" --pfc 0,0,0,0,1,0,0,0")
	out, err = playbook(t, inv, filepath.Join(playbooks, "rnic-qos.yml"), "--start-at-task", "Read back trust and PFC")
	if err == nil || recap(t, out, h)["failed"] != 1 || recap(t, out, lab.Hosts[1].Name)["failed"] != 0 ||
		!strings.Contains(out, h+" "+lab.Hosts[0].RNICs[0].Netdev+": mlnx_qos does not show trust dscp and PFC 0,0,0,1,0,0,0,0") {
		t.Errorf("PFC changed on %s: the read-back check must fail there only (err %v)\n%s", h, err, out)
	}
}

// checkPrepareHosts runs prepare-hosts.yml in check mode against the
// loopback host (see TestAnsibleAgainstLoopbackSSHD).
func checkPrepareHosts(t *testing.T, inv, labctlDir string, vars []string) {
	if _, err := os.Stat("/etc/debian_version"); err != nil {
		t.Skip("the check-mode run expects a Debian host (the project's machines are)")
	}
	if os.Geteuid() != 0 && exec.Command("sudo", "-n", "true").Run() != nil {
		t.Skip("host-os.yml becomes root on the host: run the tests as root or with passwordless sudo")
	}
	var skipTags []string
	if exec.Command("apt-cache", "show", "perftest").Run() != nil {
		t.Log("apt's package lists do not know perftest (no apt-get update on this machine): packages tasks skipped")
		skipTags = []string{"--skip-tags", "packages"}
	}
	const sysctlFile = "/etc/sysctl.d/90-labctl.conf"
	_, statErr := os.Stat(sysctlFile)
	sysctlBefore := statErr == nil

	out, err := playbook(t, inv, append(append([]string{"--check", "--diff", filepath.Join(playbooks, "prepare-hosts.yml")}, vars...), skipTags...)...)
	if err != nil {
		t.Fatalf("prepare-hosts.yml --check: %v\n%s", err, out)
	}
	if r := recap(t, out, "h1"); r["failed"] != 0 || r["unreachable"] != 0 || r["ok"] == 0 {
		t.Errorf("prepare-hosts.yml --check recap %v\n%s", r, out)
	}
	hw := 0
	for _, f := range []string{"host-os.yml", "agent.yml", "rnic-qos.yml"} {
		for _, task := range playbookTasks(t, f) {
			got := taskResult(out, task.Name, "h1")
			switch {
			case hasTag(task.Tags, "hardware"):
				hw++
				if got != "skipping" {
					t.Errorf("%s: hardware task %q: %q, want it shown skipped", f, task.Name, got)
				}
			case strings.Contains(task.Name, "RHEL family"), strings.HasPrefix(task.Name, "Time sync"):
				if got != "skipping" { // a Debian host; no service to ask in check mode
					t.Errorf("%s: task %q: %q, want skipping", f, task.Name, got)
				}
			case hasTag(task.Tags, "packages") && skipTags != nil:
			case got != "ok" && got != "changed":
				t.Errorf("%s: task %q: %q, want ok or changed", f, task.Name, got)
			}
		}
	}
	if hw == 0 {
		t.Error("no task is tagged hardware")
	}
	if !strings.Contains(out, "+kernel.numa_balancing = 0") {
		t.Errorf("check mode shows no diff of the sysctl file:\n%s", out)
	}
	if _, err := os.Stat(sysctlFile); !sysctlBefore && err == nil {
		t.Errorf("check mode wrote %s", sysctlFile)
	}
	if _, err := os.Stat(labctlDir); err == nil {
		t.Errorf("check mode created %s", labctlDir)
	}

}
