#!/usr/bin/env bash
# Pushes per second and guard's hook latency behind a real HTTP git server (issue 14).
#
#   benches/http_load.sh [--pushes N] [--jobs J] [--out DIR]
#
# A bare repository with guard's pre-receive hook installed by `install.sh --server`, served
# by lighttpd through `git http-backend` behind HTTP basic authentication on a free port of
# 127.0.0.1 (10 users; the hook sees REMOTE_USER). N pushes (default 200) by the 10 users,
# J at a time (default 10; then again one at a time), each a new branch at a commit of its own:
# 2 in 5 clean human changes, 1 in 5 a human's edit of the freeze file with its trailer, 1 in 5
# an agent's edit of it (rejected), 1 in 5 that edit with break-glass by an allowed user
# (accepted unchecked and logged). The peer: the same pushes into the same server's twin
# repository without a hook (every push accepted).
#
# The hook's own time is measured by a wrapper that `install.sh --guard` installs in guard's
# place: bash's $EPOCHREALTIME before and after it runs guard (no process of its own), so it
# is guard's whole run (start-up, reading the push, judging, exit) and nothing of git's.
# Reported: pushes per second (all pushes over the wall time of the batch), p50/p99/max of
# the hook's time and of each `git push` as its client sees it.
#
# Every push is checked: accepted or rejected as its kind says, and one audit-log line per
# break-glass push. Exits non-zero on any wrong answer; never asserts times.
#
# GUARD=/path/to/guard measures another build (default: cargo build --release, then
# target/release/guard). Needs lighttpd (Debian's package), git, python3, bash 5.
set -euo pipefail

pushes=200
jobs=10
out=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --pushes) pushes=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "usage: $0 [--pushes N] [--jobs J] [--out DIR]" >&2; exit 2 ;;
    esac
done

here=$(cd "$(dirname "$0")/.." && pwd)
out=${out:-$here/target/bench-data/http-load}
mkdir -p "$out"
out=$(cd "$out" && pwd)
lighttpd=/usr/sbin/lighttpd
[[ -x $lighttpd ]] || { echo "lighttpd is missing: apt-get install lighttpd" >&2; exit 2; }
if [[ -z ${GUARD:-} ]]; then
    (cd "$here" && cargo build --release --quiet)
    GUARD=$here/target/release/guard
fi

work=$(mktemp -d)
server_pid=""
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$out"

# Hermetic git for every command here and for the server's hooks.
export HOME=$work GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME="Human Dev" GIT_AUTHOR_EMAIL=dev@example.com
export GIT_COMMITTER_NAME="Human Dev" GIT_COMMITTER_EMAIL=dev@example.com
users=(alice bob carol dave erin frank grace heidi ivan judy)

# The timing wrapper, in guard's place.
timings=$work/timings
cat >"$work/guard-timed" <<EOF
#!/usr/bin/env bash
start=\$EPOCHREALTIME
'$GUARD' "\$@"
rc=\$?
[[ \${1:-} == hook ]] && echo "\$start \$EPOCHREALTIME \$rc" >>'$timings'
exit \$rc
EOF
chmod +x "$work/guard-timed"

git init -q --bare -b main "$work/bare.git"
bash "$here/install.sh" --server "$work/bare.git" --guard "$work/guard-timed" >/dev/null 2>&1
git -C "$work/bare.git" config receive.advertisePushOptions true
git -C "$work/bare.git" config guard.bypass alice
git -C "$work/bare.git" config guard.auditLog "$work/audit.log"

# The peer: the same server without a hook.
git init -q --bare -b main "$work/plain.git"
git -C "$work/plain.git" config receive.advertisePushOptions true

git clone -q "file://$work/bare.git" "$work/client" 2>/dev/null
cd "$work/client"
mkdir -p qa
cat >qa/merge_ledger.toml <<'EOF'
version = 1

[properties]
required = false

[fixtures]
lockfile = "qa/fixtures.lock.json"
paths = ["tests/fixtures/"]

[freeze]
file = "qa/freeze.toml"

[agents]
emails = ['cursoragent@cursor.com']
EOF
printf 'version = 1\nmax_active_leases = 2\n' >qa/freeze.toml
printf '{"files": {}}\n' >qa/fixtures.lock.json
echo "A project guarded by merge-guard." >README.md
git add -A
git commit -q -m "Add the merge ledger" -m $'Ledger-Change: human\nFreeze-Lease: human\nFixture-Lock: human'
git push -q origin main 2>/dev/null
git push -q "file://$work/plain.git" main
base=$(git rev-parse HEAD)

# The pushes: kind by number, user by number, each commit a child of the base.
plan=$work/plan
: >"$plan"
for ((k = 0; k < pushes; k++)); do
    git checkout -q --detach "$base"
    user=${users[k % 10]}
    case $((k % 5)) in
        0 | 1) kind=clean; echo "note $k" >"notes-$k.md"; git add -A; git commit -q -m "Note $k" ;;
        2) kind=trailer; echo "# reviewed $k" >>qa/freeze.toml; git commit -q -am "Review $k" -m "Freeze-Lease: human" ;;
        3) kind=agent; echo "# parked $k" >>qa/freeze.toml
           GIT_AUTHOR_NAME="Cursor Agent" GIT_AUTHOR_EMAIL=cursoragent@cursor.com git commit -q -am "Park $k" ;;
        4) kind=bypass; user=alice; echo "# parked $k" >>qa/freeze.toml
           GIT_AUTHOR_NAME="Cursor Agent" GIT_AUTHOR_EMAIL=cursoragent@cursor.com git commit -q -am "Emergency $k" ;;
    esac
    echo "$k $user $kind $(git rev-parse HEAD)" >>"$plan"
done

# lighttpd on a free port: a port found free may be taken before lighttpd binds it, so it is
# retried on another when lighttpd says so.
mkdir -p "$work/www" "$work/uploads"
for u in "${users[@]}"; do echo "$u:$u-secret"; done >"$work/users"
backend=$(git --exec-path)/git-http-backend
for try in $(seq 20); do
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat >"$work/lighttpd.conf" <<EOF
server.document-root = "$work/www"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$work/lighttpd.log"
server.upload-dirs = ("$work/uploads")
server.max-connections = 256
server.modules = ("mod_alias", "mod_setenv", "mod_auth", "mod_authn_file", "mod_cgi")
auth.backend = "plain"
auth.backend.plain.userfile = "$work/users"
auth.require = ("/" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
alias.url = ("/git" => "$backend")
\$HTTP["url"] =~ "^/git" {
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "$work", "GIT_HTTP_EXPORT_ALL" => "",
    "HOME" => "$work", "GIT_CONFIG_GLOBAL" => "/dev/null", "GIT_CONFIG_NOSYSTEM" => "1", "LC_ALL" => "C")
}
EOF
    : >"$work/lighttpd.log"
    "$lighttpd" -D -f "$work/lighttpd.conf" >>"$work/lighttpd.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 400); do
        grep -q "server started" "$work/lighttpd.log" && break 2
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    grep -q "Address already in use" "$work/lighttpd.log" || { cat "$work/lighttpd.log" >&2; exit 1; }
done
[[ -n $server_pid ]] || { echo "lighttpd found no free port" >&2; exit 1; }

# One push: "k kind exit-status seconds".
cat >"$work/push-one" <<EOF
#!/usr/bin/env bash
read -r k user kind commit <<<"\$1"
repo=bare.git
[[ \$2 == plain-* ]] && repo=plain.git
opts=()
[[ \$kind == bypass ]] && opts=(-o "guard.bypass=bench \$k")
start=\$EPOCHREALTIME
git push -q "\${opts[@]}" "http://\$user:\$user-secret@127.0.0.1:$port/git/\$repo" "\$commit:refs/heads/\$2-\$k" 2>/dev/null
rc=\$?
echo "\$k \$kind \$rc \$start \$EPOCHREALTIME"
EOF
chmod +x "$work/push-one"

run_batch() { # name jobs
    local name=$1 j=$2
    : >"$timings"
    : >"$work/audit.log"
    local t0=$EPOCHREALTIME
    xargs -P "$j" -I{} "$work/push-one" {} "$name" <"$plan" >"$out/$name.pushes"
    local t1=$EPOCHREALTIME
    cp "$timings" "$out/$name.hooks"
    cp "$work/audit.log" "$out/$name.audit"
    echo "$t0 $t1" >"$out/$name.wall"
}

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "guard: $("$GUARD" --version) at $(git -C "$here" rev-parse --short HEAD)"
    echo "git: $(git --version), $("$lighttpd" -v | head -1)"
    echo "cores: $(nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"
run_batch concurrent "$jobs"
run_batch sequential 1
run_batch plain-concurrent "$jobs"
run_batch plain-sequential 1

python3 - "$out" "$pushes" "$jobs" <<'EOF'
import json, statistics, sys
out, pushes, jobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs) + 0.5) - 1))]

rows = []
for name, j in (("concurrent", jobs), ("sequential", 1), ("plain-concurrent", jobs), ("plain-sequential", 1)):
    plain = name.startswith("plain-")
    results = [l.split() for l in open(f"{out}/{name}.pushes")]
    assert len(results) == pushes, f"{name}: {len(results)} of {pushes} pushes ran"
    for k, kind, rc, *_ in results:
        want = 1 if kind == "agent" and not plain else 0
        assert (int(rc) != 0) == bool(want), f"{name}: push {k} ({kind}) exited {rc}"
    audit = [json.loads(l) for l in open(f"{out}/{name}.audit")]
    bypasses = 0 if plain else sum(1 for r in results if r[1] == "bypass")
    assert len(audit) == bypasses, f"{name}: {len(audit)} audit lines for {bypasses} break-glass pushes"
    hooks = [l.split() for l in open(f"{out}/{name}.hooks")]
    assert len(hooks) == (0 if plain else pushes), f"{name}: {len(hooks)} hook runs for {pushes} pushes"
    hook_ms = [(float(b) - float(a)) * 1000 for a, b, _ in hooks]
    push_ms = [(float(r[4]) - float(r[3])) * 1000 for r in results]
    t0, t1 = map(float, open(f"{out}/{name}.wall").read().split())
    hook = (pct(hook_ms, 50), pct(hook_ms, 99), max(hook_ms)) if hook_ms else (None,) * 3
    rows.append((name, j, pushes / (t1 - t0), t1 - t0, *hook,
                 pct(push_ms, 50), pct(push_ms, 99)))

lines = [
    "| batch | at a time | pushes/s | wall | hook p50 | hook p99 | hook max | push p50 | push p99 |",
    "|---|---|---|---|---|---|---|---|---|",
]
ms = lambda v: "-" if v is None else f"{v:.1f} ms"
for name, j, rate, wall, h50, h99, hmax, p50, p99 in rows:
    name = name.replace("plain-", "no hook, ")
    lines.append(f"| {name} | {j} | {rate:.1f} | {wall:.1f} s | {ms(h50)} | {ms(h99)} | {ms(hmax)} | {p50:.0f} ms | {p99:.0f} ms |")
text = "\n".join(lines) + "\n"
open(f"{out}/summary.md", "w").write(text)
print(text, end="")
EOF
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
cat "$out/machine.txt"
echo "results: $out"
