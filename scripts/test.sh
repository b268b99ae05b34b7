#!/usr/bin/env bash
# The project's test command (README "Run the tests"; CI calls exactly this).
# On a fresh machine with only Go it:
#   1. installs InfluxDB 1.8.10 OSS (influxd) with `go install`, cached under
#      ${XDG_CACHE_HOME:-~/.cache}/labctl/bin after the first time;
#   2. starts it on a free loopback port with a throw-away data directory;
#   3. installs staticcheck (cached the same way) and fails on unformatted
#      files (`gofmt -l`), then runs `go vet ./...` and `staticcheck ./...`
#      (staticcheck.conf says which checks are off, and why);
#   4. runs `go test ./...` (extra arguments are passed to go test); when it
#      fails, its failures are repeated at the end, briefly;
#   5. runs every fuzz target briefly (see fuzz_all below);
#   6. stops influxd.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/labctl"
bin="$cache/bin"
if [ ! -x "$bin/influxd" ]; then
	echo "test.sh: installing influxd 1.8.10 into $bin (first run only, a few minutes)" >&2
	GOBIN="$bin" go install github.com/influxdata/influxdb/cmd/influxd@v1.8.10
fi
export LABCTL_INFLUXD="$bin/influxd"
if [ ! -x "$bin/staticcheck" ]; then
	echo "test.sh: installing staticcheck v0.8.2 into $bin (first run only)" >&2
	GOBIN="$bin" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi

# --- slurm: a one-node Slurm cluster for the executor tests ---------------
# internal/testslurm starts munged, slurmctld and slurmd itself; it needs
# Debian's slurm-wlm and munge, installed here once (skipped when present).
# Without apt-get or root the tests that need them skip and say why.
install_slurm() {
	if command -v slurmctld >/dev/null && command -v munged >/dev/null; then
		return
	fi
	if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
		echo "test.sh: slurm-wlm/munge missing and not installable here (needs apt-get and root): Slurm tests will skip" >&2
		return
	fi
	echo "test.sh: installing slurm-wlm and munge (first run only, ~20 s)" >&2
	# another apt-get may hold the lock: wait for it rather than fail
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq slurm-wlm munge >/dev/null ||
		{ apt-get -o DPkg::Lock::Timeout=300 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq slurm-wlm munge >/dev/null; } ||
		echo "test.sh: could not install slurm-wlm/munge: Slurm tests will skip" >&2
}
install_slurm
# --- end slurm --------------------------------------------------------------
# --- ansible and openssh-server: the Ansible tests' real SSH host ---------
# e2e/ansible_test.go runs the playbooks under ansible/ with Debian's
# ansible-playbook against an OpenSSH server it starts on loopback
# (internal/testsshd); reports/regress validates its JUnit against Jenkins'
# junit-10 schema with xmllint (libxml2-utils). Installed with apt-get when
# missing (skipped when present); where they cannot be installed those
# tests skip, saying why (the JUnit one fails instead under CI=true).
install_ansible_sshd() {
	if command -v ansible-playbook >/dev/null && [ -x /usr/sbin/sshd ] && command -v xmllint >/dev/null; then
		return
	fi
	local sudo=""
	if [ "$(id -u)" != 0 ]; then
		if ! command -v sudo >/dev/null; then
			echo "test.sh: ansible/openssh-server missing and no root to install them: Ansible tests will skip" >&2
			return
		fi
		sudo="sudo -n"
	fi
	if ! command -v apt-get >/dev/null; then
		echo "test.sh: ansible/openssh-server missing and no apt-get: Ansible tests will skip" >&2
		return
	fi
	echo "test.sh: installing ansible and openssh-server with apt-get (first run only)" >&2
	# update first: the package lists may be absent or stale (the check-mode
	# run of the playbooks asks apt about perftest and rdma-core too)
	if ! { $sudo apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends ansible openssh-server libxml2-utils; } >&2; then
		echo "test.sh: apt-get could not install ansible/openssh-server: Ansible tests will skip" >&2
	fi
}
install_ansible_sshd
# --- end ansible and openssh-server -----------------------------------------

free_port() {
	local p
	for p in $(seq "$1" $(($1 + 500))); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "test.sh: no free port near $1" >&2
	exit 1
}

work="$(mktemp -d)"
http_port="$(free_port 18086)"
rpc_port="$(free_port $((http_port + 1)))"
sed -e "s|@DIR@|$work|g" -e "s|@HTTP@|$http_port|g" -e "s|@RPC@|$rpc_port|g" \
	internal/testinflux/influxdb.conf.tmpl >"$work/influxdb.conf"
"$LABCTL_INFLUXD" run -config "$work/influxdb.conf" >"$work/influxd.log" 2>&1 &
influx_pid=$!
cleanup() {
	local rc=$?
	# A failed run shows what the shared influxd said (warnings and errors
	# only), since its data directory goes with the run.
	if [ "$rc" -ne 0 ] && [ -s "$work/influxd.log" ]; then
		echo "test.sh: the shared influxd's log (last 40 lines):" >&2
		tail -n 40 "$work/influxd.log" >&2
	fi
	kill "$influx_pid" 2>/dev/null || true
	wait "$influx_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

export LABCTL_INFLUX_URL="http://127.0.0.1:$http_port"
for _ in $(seq 1 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$http_port") 2>/dev/null; then break; fi
	if ! kill -0 "$influx_pid" 2>/dev/null; then
		echo "test.sh: influxd failed to start:" >&2
		cat "$work/influxd.log" >&2
		exit 1
	fi
	sleep 0.1
done
echo "test.sh: influxd 1.8.10 on $LABCTL_INFLUX_URL" >&2

unformatted="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.work/*'))"
if [ -n "$unformatted" ]; then
	printf 'test.sh: gofmt would change these files (run gofmt -w on them):\n%s\n' "$unformatted" >&2
	exit 1
fi
go vet ./...
"$bin/staticcheck" ./...
# A failed go test prints a lot (a package that timed out, every goroutine's
# stack), and a CI log may keep only its end: the failures are repeated
# last, briefly.
failure_digest() {
	echo "test.sh: go test failed; where, once more:"
	# each failed test and its log (indented below it)
	awk '/^[[:space:]]*--- FAIL/{on=1; print; next} on && /^[[:space:]][[:space:]][[:space:]][[:space:]]/{print; next} {on=0}' "$1" | head -n 80
	# a timed-out package: the panic and the tests still running
	awk '/^panic: /{on=1} /^goroutine [0-9]+ /{on=0} on' "$1" | head -n 30
	# a stuck step that internal/testwatch ended: its report
	awk '/^testwatch: /{on=1} /^(FAIL|exit status|ok)([[:space:]]|$)/{on=0} on' "$1" | tail -n 60
	grep -E '^FAIL' "$1"
}
if ! go test -count=1 -timeout 20m "$@" ./... 2>&1 | tee "$work/gotest.log"; then
	failure_digest "$work/gotest.log" >&2
	exit 1
fi

# ---- fuzz: every fuzz target, briefly -------------------------------------
# Each Fuzz* target (YAML loaders, parsers of tool output and of anything a
# device or a user sends) runs for LABCTL_FUZZTIME (default 1s) beyond its
# seed corpus, which `go test` above already ran. A failure leaves the input
# under the package's testdata/fuzz/ and fails the script; every target runs
# and the failures are listed at the end. 41 targets took 135 s at 1 s
# each on 2 cores shared with other work (load 9), 200 s at 1.5 s: most of
# it is each target's start (instrumented build, baseline coverage). Skipped for a
# targeted run (extra arguments, e.g. -run) unless LABCTL_FUZZTIME is set;
# LABCTL_FUZZTIME=0 skips it always.
fuzz_all() {
	local fuzztime="${LABCTL_FUZZTIME:-1s}" first second pkg name out n=0 start=$SECONDS
	if [ "$fuzztime" = 0 ] || { [ $# -gt 0 ] && [ -z "${LABCTL_FUZZTIME:-}" ]; }; then
		echo "test.sh: fuzzing skipped (LABCTL_FUZZTIME=${LABCTL_FUZZTIME:-unset}, $# extra arguments)" >&2
		return 0
	fi
	local -a names=() failed=()
	# `go test -list` prints a package's matching names, then "ok <package> ...".
	while read -r first second _; do
		case "$first" in
		Fuzz*) names+=("$first") ;;
		ok)
			pkg="$second"
			for name in "${names[@]}"; do
				n=$((n + 1))
				# Go's fuzzer sometimes fails a short run with "context deadline
				# exceeded" and no failing input (its own timing, not a bug found):
				# such a run is tried once more; a real failure writes its input.
				if ! out="$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s "$pkg" 2>&1)" &&
					{ [[ "$out" == *"Failing input written"* ]] ||
						! out="$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s "$pkg" 2>&1)"; }; then
					printf 'test.sh: fuzz target %s in %s failed:\n%s\n' "$name" "$pkg" "$out" >&2
					failed+=("$pkg.$name")
				fi
			done
			names=()
			;;
		esac
	done < <(go test -list '^Fuzz' ./...)
	echo "test.sh: fuzzed $n targets for $fuzztime each in $((SECONDS - start))s; ${#failed[@]} failed ${failed[*]}" >&2
	[ "${#failed[@]}" -eq 0 ]
}
fuzz_all "$@"
# ---- end fuzz ---------------------------------------------------------------
