#!/usr/bin/env bash
# merge-guard benchmark harness: guard's cost beside its peers (issue 6).
#
#   benches/run.sh [--small] [--sha256] [--out DIR]
#
# Measures, with hyperfine (wall time) and /usr/bin/time -v (peak RSS):
#   junit     `guard score --junit R.xml --format json`   vs  Python xml.etree.ElementTree
#   fixtures  `guard lock --check`                         vs  `openssl dgst -sha256`, `sha256sum`
#   history   `guard check A..B`                            vs  `git log --format=%H A..B -- <protected paths>`
#   push      `git push` of one commit into a bare clone with guard's pre-receive hook installed
#             vs  the same push into a bare clone without it; and `guard hook pre-receive`
#             alone on the same update
#   tags      the same for a push of 5,000 new tags at commits main already holds (a mirror or
#             a tag import)
#   pushmany  a push of 1,000 commits the servers already hold (main set back), and pushnew the
#             same 1,000 commits into servers that lack them (as new work arrives: the hook
#             reads them from the push's quarantine)
# each at two sizes (full: 100k and 1M cases, 256 MiB and 1 GiB of fixtures, 5,000 and 20,000
# commits; --small: 10k and 100k cases, 16 and 64 MiB, 500 and 2,000 commits, under a minute);
# the push into the larger repository only. Then (issue 15):
#   gitfixtures  `guard check A..B` where B adds the fixture corpus (hashed from git blobs)
#             vs  `openssl dgst -sha256`, `sha256sum` over the same files
#   articles  `guard check A..B` vs `git log --format=%H A..B -- <protected paths>` on the
#             articles' layout (protected tests/fixtures/ and tests/properties/ beside 200
#             busy test directories under tests/), 20,000 commits; with a commit-graph and
#             without one (`-nograph`)
#   rejecting the same history with protected edits that lack their trailers: guard REJECTs
#   merges    the same on a merge-heavy history (every change a branch merged with --no-ff),
#             20,000 and 200,000 commits
# (--small: the same at a tenth of the files and 2,000 and 5,000 commits).
#
# Generated inputs live in target/bench-data/ (reused while the generators and sizes are
# unchanged; delete the directory to regenerate). Results go to DIR (default
# target/bench-data/results-full or -small): hyperfine JSON per group, rss.tsv, machine.txt and
# summary.md, the table BENCHMARKS.md quotes.
#
# The guard binary is target/release/guard, built with `cargo build --release` first; set
# GUARD=/path/to/guard to measure another build instead.
#
# Exits non-zero if any command under test fails or gives a wrong answer. Never asserts times.
set -euo pipefail

usage() {
    cat >&2 <<EOF
usage: $0 [--small] [--sha256] [--out DIR] [--only GROUP,...]

  --small    small inputs and 3 runs each: checks the harness works (under a minute)
  --sha256   every generated repository made with SHA-256 object ids (GIT_DEFAULT_HASH),
             in target/bench-data-sha256/: the same histories as without it, for comparison
  --out DIR  where to write results (default target/bench-data/results-full or -small)
  --only     run only these groups: junit, fixtures, history, push (the one-commit,
             1,000-commit and tags pushes), gitfixtures, histories (issue 15's),
             realhistory (pytest's own history from 5.3.0, from the clone that
             GUARD_BENCH_PYTEST names; skipped without it); the inputs they need are
             generated as usual

Needs hyperfine, GNU time (/usr/bin/time), python3, git, openssl and sha256sum.
EOF
    exit 2
}

small=0
sha256=0
out=""
only=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --small) small=1 ;;
        --sha256) sha256=1 ;;
        --out)
            [[ $# -ge 2 ]] || usage
            out=$2
            shift
            ;;
        --only)
            [[ $# -ge 2 ]] || usage
            only=$2
            shift
            for group in ${only//,/ }; do
                case $group in
                    junit | fixtures | history | push | gitfixtures | histories | realhistory) ;;
                    *)
                        echo "$0: unknown group: $group" >&2
                        usage
                        ;;
                esac
            done
            ;;
        -h | --help) usage ;;
        *)
            echo "$0: unknown argument: $1" >&2
            usage
            ;;
    esac
    shift
done

# selected GROUP: whether --only names GROUP (every group without --only).
selected() { [[ -z $only || ",$only," == *",$1,"* ]]; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
data="$root/target/bench-data"
if [[ $sha256 == 1 ]]; then
    # `git init` follows it; clones take their source's format.
    export GIT_DEFAULT_HASH=sha256
    data="$root/target/bench-data-sha256"
fi

missing=0
need() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "$0: $1 is not installed; $2" >&2
        missing=1
    fi
}
need hyperfine "install it with: apt-get install -y hyperfine (or cargo install hyperfine)"
need python3 "install Python 3 (apt-get install -y python3)"
need git "install it with: apt-get install -y git"
need openssl "install it with: apt-get install -y openssl"
need sha256sum "install it with: apt-get install -y coreutils"
if [[ ! -x /usr/bin/time ]]; then
    echo "$0: /usr/bin/time (GNU time) is missing; install it with: apt-get install -y time" >&2
    missing=1
fi
[[ $missing -eq 0 ]] || exit 2
# The interpreter itself for the ElementTree peer: `python3` on PATH may be a wrapper (pyenv's
# shim is a bash script that adds about 100 ms to every run), which is not the peer's cost.
py=$(python3 -c 'import sys; print(sys.executable)')

if [[ -z ${GUARD:-} ]]; then
    (cd "$root" && cargo build --release --quiet)
    GUARD="$root/target/release/guard"
fi
[[ -x $GUARD ]] || {
    echo "$0: guard binary $GUARD is not executable" >&2
    exit 2
}

if [[ $small -eq 1 ]]; then
    label=small
    junit_sizes=(10000 100000)
    fixture_sizes=("16 16" "64 64") # "MiB files"
    repo_sizes=("500 750" "2000 3000")  # "commits files"
    # "name commits expected-exit generator options": issue 15's histories.
    history_specs=(
        "articles-2000 2000 0 --layout articles --shape linear --scale 0.1"
        "rejecting-2000 2000 1 --layout articles --shape linear --scale 0.1 --reject"
        "merges-2000 2000 0 --layout articles --shape merges --scale 0.1"
        "merges-5000 5000 0 --layout articles --shape merges --scale 0.1"
    )
    tag_count=500
    runs=(--warmup 1 --runs 3)
    slow_runs=(--warmup 1 --runs 3)
    push_runs=(--warmup 1 --runs 3)
else
    label=full
    junit_sizes=(100000 1000000)
    fixture_sizes=("256 250" "1024 1000")
    repo_sizes=("5000 7500" "20000 30000")
    history_specs=(
        "articles-20000 20000 0 --layout articles --shape linear"
        "rejecting-20000 20000 1 --layout articles --shape linear --reject"
        "merges-20000 20000 0 --layout articles --shape merges"
        "merges-200000 200000 0 --layout articles --shape merges"
    )
    tag_count=5000
    runs=(--warmup 2 --runs 10)
    slow_runs=(--warmup 1 --runs 5) # the peers that take seconds per run
    push_runs=(--warmup 3 --runs 20) # a push runs eight processes: more runs against the noise
fi
out=${out:-"$data/results-$label"}
mkdir -p "$data" "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.json "$out/rss.tsv" "$out/groups.tsv" "$out/summary.md"

fail() {
    echo "$0: FAILED: $*" >&2
    exit 1
}

# Run a generator only when its inputs changed: the stamp holds the arguments and the
# generators' digests.
stamp_of() {
    local files=("$here"/gen_*)
    printf '%s\n' "$*"
    sha256sum "${files[@]}" | cut -d' ' -f1
}
fresh() { # fresh STAMPFILE ARGS... -> true when the data behind STAMPFILE is current
    local file=$1
    shift
    [[ -f $file ]] && [[ "$(cat "$file")" == "$(stamp_of "$@")" ]]
}

# Peak RSS in KiB of one run of a command, appended to rss.tsv. The command must exit 0, or
# with RSS_EXIT=N set, exit N.
rss() {
    local name=$1
    shift
    local log="$out/time-v.log" want=${RSS_EXIT:-0} status=0
    /usr/bin/time -v -o "$log" "$@" >/dev/null || status=$?
    if [[ $status -ne $want ]]; then
        fail "$name: $* exited $status, expected $want"
    fi
    local kb
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    printf '%s\t%s\n' "$name" "$kb" >>"$out/rss.tsv"
    rm -f "$log"
}

# The load other processes put on the machine while hyperfine ran, in cores: the machine's
# busy CPU time (/proc/stat) minus the CPU time of this script's own children (bash `times`,
# which includes hyperfine's children), over the wall time. The machine is shared: a figure
# much above 0 means that group's times are inflated. `times` must run in this shell, not in
# a $(...) subshell, whose children's times start at zero.
clk=$(getconf CLK_TCK)
load_mark() { # sets m_busy, m_kids, m_wall (seconds)
    times >"$out/.times"
    m_kids=$(awk 'NR == 2 {
        t = 0
        for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
        printf "%.2f\n", t
    }' "$out/.times")
    m_busy=$(awk -v hz="$clk" '/^cpu / {printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz}' /proc/stat)
    m_wall=$(date +%s.%N)
}
load_start() {
    load_mark
    l_busy=$m_busy l_kids=$m_kids l_wall=$m_wall
}
load_end() { # sets other_load: the others' load since load_start, in cores
    load_mark
    other_load=$(awk -v b="$m_busy" -v b0="$l_busy" -v k="$m_kids" -v k0="$l_kids" \
        -v w="$m_wall" -v w0="$l_wall" \
        'BEGIN { o = ((b - b0) - (k - k0)) / (w - w0); if (o < 0) o = 0; printf "%.2f\n", o }')
    rm -f "$out/.times"
}

q() { printf '%q' "$1"; } # quote a word for the command strings hyperfine runs in a shell

# The paths every generated ledger protects: the peer's pathspec.
# The ledger's protected paths: its policy files, corpora and attribute files, and the test
# harness anywhere in the tree (the `[harness]` globs, which make git and guard alike walk every
# directory a commit changes).
protected=(qa/merge_ledger.toml qa/freeze.toml qa/fixtures.lock.json tests/fixtures tests/properties
    .gitattributes .lfsconfig qa/.gitattributes tests/.gitattributes
    ':(glob)**/conftest.py' ':(glob)**/pytest.ini' ':(glob)**/.pytest.ini' ':(glob)**/pytest.toml'
    ':(glob)**/.pytest.toml' ':(glob)**/tox.ini' ':(glob)**/.coveragerc'
    ':(glob)**/.config/nextest.toml' ':(glob)**/pyproject.toml' ':(glob)**/setup.cfg')

# A copy of the repository REPO (its git directory GITDIR) without its commit-graph, as in
# a clone nobody ran `git gc` in: hard links, so it costs no space; made again when REPO's
# stamp is newer. Prints the copy's path.
without_graph() {
    local repo=$1 gitdir=$2 copy="$1-nograph"
    if [[ ! -d $copy || $repo.stamp -nt $copy ]]; then
        rm -rf "$copy"
        cp -al "$repo" "$copy"
        rm -rf "${copy:?}/${gitdir#"$repo"}/objects/info/commit-graph" \
            "${copy:?}/${gitdir#"$repo"}/objects/info/commit-graphs"
        touch "$copy"
    fi
    echo "$copy"
}

# history_bench NAME REPO A B EXIT DESCRIPTION: times `guard check A..B` (which must exit
# EXIT) beside git's pathspec log, then takes the peak RSS of both. Correctness is checked by
# the caller first.
history_bench() {
    local name=$1 repo=$2 a=$3 b=$4 want=$5 desc=$6
    local ignore=() timing=("${runs[@]}")
    [[ $want -eq 0 ]] || ignore=(--ignore-failure)
    # The 200,000-commit histories take seconds per run.
    [[ $(git -C "$repo" rev-list --count "$a..$b") -lt 100000 ]] || timing=("${slow_runs[@]}")
    echo "== $name: $desc"
    load_start
    # No shell: these are plain commands, and both take only milliseconds on small repos.
    hyperfine -N "${timing[@]}" "${ignore[@]}" --style basic --export-json "$out/$name.json" \
        -n "guard check A..B" "$(q "$GUARD") -C $(q "$repo") check $a..$b" \
        -n "git log -- <protected>" "git -C $(q "$repo") log --format=%H $a..$b -- ${protected[*]}"
    load_end
    printf '%s\t0\t%s\t%s\n' "$name" "$desc" "$other_load" >>"$out/groups.tsv"
    RSS_EXIT=$want rss "$name guard check A..B" "$GUARD" -C "$repo" check "$a..$b"
    rss "$name git log -- <protected>" git -C "$repo" log --format=%H "$a..$b" -- "${protected[@]}"
}

{
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "size: $label"
    echo "nproc: $(nproc)"
    echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
    echo "sha_ni: $(grep -qw sha_ni /proc/cpuinfo && echo yes || echo no)"
    echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "kernel: $(uname -r)"
    echo "guard: $("$GUARD" --version) ($GUARD)"
    echo "python3: $("$py" --version 2>&1) ($py)"
    echo "openssl: $(openssl version)"
    echo "sha256sum: $(sha256sum --version | head -1)"
    echo "git: $(git --version)"
    echo "hyperfine: $(hyperfine --version)"
} >"$out/machine.txt"
cat "$out/machine.txt"

# --- 1. JUnit: guard score vs ElementTree ------------------------------------------------
jproj="$data/junit-project"
mkdir -p "$jproj/qa"
# Its own repository, so guard takes this directory as the root (not the enclosing checkout).
[[ -d $jproj/.git ]] || git init -q "$jproj"
cat >"$jproj/qa/merge_ledger.toml" <<'EOF'
# Benchmark ledger: every column is checked, but ordinary failures do not reject, so the
# report scores MERGE and the exit code says whether guard worked.
version = 1

[properties]
paths = ["tests/properties/"]

[fixtures]
lockfile = "qa/fixtures.lock.json"

[freeze]
file = "qa/flake_freeze.txt"
max_active_leases = 5

[tests]
failures_reject = false
EOF
echo '{"files": {}}' >"$jproj/qa/fixtures.lock.json"
# The same policy with the default `failures_reject = true`: every failing test becomes a
# finding and the report REJECTs (exit 1). Measured for peak RSS only: the worst case for memory.
sed 's/^failures_reject = false/failures_reject = true/' "$jproj/qa/merge_ledger.toml" \
    >"$jproj/qa/reject_ledger.toml"

for cases in "${junit_sizes[@]}"; do
    selected junit || continue
    xml="$data/junit-$cases.xml"
    if ! fresh "$xml.stamp" junit "$cases"; then
        echo "== generating $xml"
        python3 "$here/gen_junit.py" "$xml" "$cases" --freeze "$xml.freeze"
        stamp_of junit "$cases" >"$xml.stamp"
    fi
    cp "$xml.freeze" "$jproj/qa/flake_freeze.txt"
    bytes=$(stat -c %s "$xml")

    # Correctness first: guard must merge and count every record; ElementTree must agree.
    json=$("$GUARD" -C "$jproj" score --junit "$xml" --format json) ||
        fail "guard score on $xml exited $?"
    got=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["decision"], d["junit"]["cases"])' <<<"$json")
    [[ $got == "MERGE $cases" ]] || fail "guard score on $xml: expected 'MERGE $cases', got '$got'"
    got=$("$py" "$here/et_peer.py" "$xml" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cases"])')
    [[ $got == "$cases" ]] || fail "ElementTree peer on $xml counted $got cases"

    echo "== junit: $cases cases, $bytes bytes"
    load_start
    hyperfine "${slow_runs[@]}" --style basic --export-json "$out/junit-$cases.json" \
        -n "guard score" "$(q "$GUARD") -C $(q "$jproj") score --junit $(q "$xml") --format json" \
        -n "ElementTree" "$(q "$py") $(q "$here/et_peer.py") $(q "$xml")"
    load_end
    printf 'junit-%s\t%s\t%s cases\t%s\n' "$cases" "$bytes" "$cases" "$other_load" >>"$out/groups.tsv"
    rss "junit-$cases guard score" "$GUARD" -C "$jproj" score --junit "$xml" --format json
    rss "junit-$cases ElementTree" "$py" "$here/et_peer.py" "$xml"
    RSS_EXIT=1 rss "junit-$cases guard score, REJECT with a finding per failure" \
        "$GUARD" -C "$jproj" score --junit "$xml" --format json --ledger qa/reject_ledger.toml
done

# --- 2. Fixtures: guard lock --check vs openssl and sha256sum ---------------------------------
for spec in "${fixture_sizes[@]}"; do
    selected fixtures || selected gitfixtures || continue # group 6 commits these corpora
    read -r mib nfiles <<<"$spec"
    fproj="$data/fixtures-$mib"
    if ! fresh "$fproj.stamp" fixtures "$mib" "$nfiles"; then
        echo "== generating $fproj ($mib MiB in $nfiles files)"
        rm -rf "$fproj"
        mkdir -p "$fproj/qa" "$fproj/tests"
        git init -q "$fproj"
        cat >"$fproj/qa/merge_ledger.toml" <<'EOF'
version = 1

[fixtures]
lockfile = "qa/fixtures.lock.json"
paths = ["tests/fixtures/"]
EOF
        python3 "$here/gen_fixtures.py" "$fproj/tests/fixtures" "$mib" "$nfiles"
        "$GUARD" -C "$fproj" lock >/dev/null || fail "guard lock in $fproj"
        stamp_of fixtures "$mib" "$nfiles" >"$fproj.stamp"
    fi
    selected fixtures || continue
    list="$fproj.files"
    (cd "$fproj" && find tests/fixtures -type f | LC_ALL=C sort) >"$list"
    bytes=$(cd "$fproj" && xargs -d '\n' stat -c %s <"$list" | awk '{s += $1} END {print s}')

    # Warm the page cache (caches cannot be dropped here), then check guard's answer.
    (cd "$fproj" && xargs -d '\n' cat <"$list" >/dev/null)
    "$GUARD" -C "$fproj" lock --check >/dev/null || fail "guard lock --check in $fproj exited $?"

    echo "== fixtures: $nfiles files, $bytes bytes"
    load_start
    cdp="cd $(q "$fproj") &&"
    hyperfine "${slow_runs[@]}" --style basic --export-json "$out/fixtures-$mib.json" \
        -n "guard lock --check" "$(q "$GUARD") -C $(q "$fproj") lock --check" \
        -n "openssl dgst -sha256" "$cdp xargs -d '\\n' openssl dgst -sha256 < $(q "$list") > /dev/null" \
        -n "sha256sum" "$cdp xargs -d '\\n' sha256sum < $(q "$list") > /dev/null"
    load_end
    printf 'fixtures-%s\t%s\t%s files\t%s\n' "$mib" "$bytes" "$nfiles" "$other_load" >>"$out/groups.tsv"
    rss "fixtures-$mib guard lock --check" "$GUARD" -C "$fproj" lock --check
done

# --- 3. History scan: guard check vs git log over protected paths ---------------------------
for spec in "${repo_sizes[@]}"; do
    # Group 4 pushes into the larger repository.
    selected history || { selected push && [[ $spec == "${repo_sizes[-1]}" ]]; } || continue
    read -r commits nfiles <<<"$spec"
    repo="$data/repo-$commits"
    if ! fresh "$repo.stamp" repo "$commits" "$nfiles"; then
        echo "== generating $repo ($commits commits over $nfiles files)"
        rm -rf "$repo"
        "$here/gen_repo.sh" "$repo" "$commits" "$nfiles"
        stamp_of repo "$commits" "$nfiles" >"$repo.stamp"
    fi
    selected history || continue
    a=$(git -C "$repo" rev-parse bench/A)
    b=$(git -C "$repo" rev-parse main)
    range_commits=$(git -C "$repo" rev-list --count "$a..$b")
    hits=$(git -C "$repo" log --format=%H "$a..$b" -- "${protected[@]}" | wc -l)
    [[ $hits -gt 0 ]] || fail "git log found no protected-path commits in $repo"

    # Correctness first. Every protected edit in the generated history is a human's with the
    # trailer the ledger asks for, so guard must say MERGE (exit 0); and it must find the same
    # commits changing protected paths as git's pathspec log (the ledger's protected paths
    # are the peer's pathspec).
    report=$("$GUARD" -C "$repo" check "$a..$b") || fail "guard check $a..$b in $repo exited $?"
    noun=commits
    [[ $hits -ne 1 ]] || noun=commit
    want="($range_commits commits; protected paths changed in $hits $noun, 0 of them by agents)"
    grep -qF "range: $a..$b $want" <<<"$report" ||
        fail "guard check $a..$b in $repo: expected '$want' in: $(grep '^range:' <<<"$report")"
    grep -qx 'decision: MERGE.*' <<<"$report" || fail "guard check $a..$b in $repo did not say MERGE"

    echo "== history: $range_commits commits in A..B, $hits touch protected paths"
    load_start
    # No shell: these are plain commands, and both take only milliseconds on small repos.
    hyperfine -N "${runs[@]}" --style basic --export-json "$out/history-$commits.json" \
        -n "guard check A..B" "$(q "$GUARD") -C $(q "$repo") check $a..$b" \
        -n "git log -- <protected>" "git -C $(q "$repo") log --format=%H $a..$b -- $(for p in "${protected[@]}"; do printf '%q ' "$p"; done)"
    load_end
    printf 'history-%s\t0\t%s commits in A..B (%s with protected paths), %s files\t%s\n' \
        "$commits" "$range_commits" "$hits" "$nfiles" "$other_load" >>"$out/groups.tsv"
    rss "history-$commits guard check A..B" "$GUARD" -C "$repo" check "$a..$b"
    rss "history-$commits git log -- <protected>" git -C "$repo" log --format=%H "$a..$b" -- "${protected[@]}"

    # The same without a commit-graph: guard must print the same report.
    nograph=$(without_graph "$repo" "$repo/.git")
    [[ "$("$GUARD" -C "$nograph" check "$a..$b")" == "$report" ]] ||
        fail "guard check $a..$b: the report without a commit-graph differs from the one with it"
    history_bench "history-$commits-nograph" "$nograph" "$a" "$b" 0 \
        "$range_commits commits in A..B ($hits with protected paths), $nfiles files, no commit-graph"
done

if selected push; then
    # --- 4. A single-commit push through the installed pre-receive hook ------------------------
    # Into the larger generated repository: two bare clones of it (each with the commit-graph the
    # generator wrote, as `git gc` leaves on a server), guard's hook installed in one with
    # install.sh; a client (a clone without a work tree) makes one ordinary commit on main and
    # pushes it over file://. Before each timed push the server's main is reset to its old tip,
    # so every run pushes the same commit into the same state (the objects are already there after
    # the first run, as the client cannot know; git sends them again).
    read -r commits _ <<<"${repo_sizes[-1]}"
    repo="$data/repo-$commits"
    push="$data/push-$commits"
    rm -rf "$push"
    mkdir -p "$push"
    (
        export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
        git clone -q --bare "$repo" "$push/hook.git"
        git clone -q --bare "$repo" "$push/plain.git"
        git clone -q --no-checkout "$repo" "$push/client"
    ) || fail "cloning $repo for the push benchmark"
    "$root/install.sh" --server "$push/hook.git" --guard "$GUARD" >/dev/null 2>&1 ||
        fail "install.sh --server $push/hook.git --guard $GUARD"
    # install.sh --server also turns receive.fsckObjects on (git checks every pushed object):
    # git's own work, so the server without the hook does it too, and the two pushes differ only
    # by the hook.
    git -C "$push/plain.git" config receive.fsckObjects true
    old=$(git -C "$push/client" rev-parse main)
    # One ordinary change (a line appended to a source file), committed without a checkout.
    new=$(
        export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_INDEX_FILE="$push/index"
        export GIT_AUTHOR_NAME="Alice Moreau" GIT_AUTHOR_EMAIL=alice@example.com
        export GIT_COMMITTER_NAME="Alice Moreau" GIT_COMMITTER_EMAIL=alice@example.com
        export GIT_AUTHOR_DATE=2025-12-01T00:00:00Z GIT_COMMITTER_DATE=2025-12-01T00:00:00Z
        cd "$push/client"
        path=$(git ls-tree -r --name-only main src | head -1)
        blob=$({ git cat-file blob "main:$path"; echo "// one more line"; } | git hash-object -w --stdin)
        git read-tree main
        git update-index --cacheinfo "100644,$blob,$path"
        git commit-tree "$(git write-tree)" -p main -m "Tidy $path"
    ) || fail "making the commit to push"
    push_cmd() { # push_cmd SERVER -> the push command line
        echo "git -C $(q "$push/client") push -q file://$(q "$push/$1.git") $new:refs/heads/main"
    }
    reset_cmd() { echo "git -C $(q "$push/$1.git") update-ref refs/heads/main $old"; }
    # time_pushes NAME DESCRIPTION PREPARE PUSH [RUNS...]: the push into the server with the
    # hook and the one without, in one hyperfine run (PREPARE SERVER and PUSH SERVER print the
    # command lines; without RUNS, push_runs and no shell), results in NAME.json.
    time_pushes() {
        local name=$1 description=$2 prepare=$3 run=$4
        shift 4
        local runs=(-N "${push_runs[@]}")
        [[ $# -eq 0 ]] || runs=("$@")
        load_start
        GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
            hyperfine "${runs[@]}" --style basic --export-json "$out/$name.json" \
            --prepare "$($prepare hook)" -n "git push, guard's hook" "$($run hook)" \
            --prepare "$($prepare plain)" -n "git push, no hook" "$($run plain)"
        load_end
        printf '%s\t0\t%s\t%s\n' "$name" "$description" "$other_load" >>"$out/groups.tsv"
    }
    # time_hook NAME DESCRIPTION UPDATES: guard's own share, `guard hook pre-receive` run by hand
    # on the update file the push gave it (the pushed objects are in the repository now,
    # outside any quarantine).
    time_hook() {
        load_start
        GIT_DIR="$push/hook.git" hyperfine "${push_runs[@]}" --style basic --export-json "$out/$1.json" \
            -n "guard hook pre-receive" "$(q "$GUARD") hook pre-receive < $(q "$3")"
        load_end
        printf '%s\t0\t%s\t%s\n' "$1" "$2" "$other_load" >>"$out/groups.tsv"
    }

    # Correctness first: the hook runs, judges the one commit and accepts it.
    pushed=$(GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
        git -C "$push/client" push file://"$push/hook.git" "$new:refs/heads/main" 2>&1) ||
        fail "the push through the hook was rejected: $pushed"
    grep -q "guard: 1 ref update accepted, 1 commit judged" <<<"$pushed" ||
        fail "the hook did not judge the push: $pushed"
    for server in hook plain; do
        eval "$(reset_cmd "$server")"
    done

    echo "== push: one commit into $commits commits"
    time_pushes "push-$commits" \
        "1 commit pushed onto $commits commits, $(git -C "$repo" ls-tree -r main | wc -l) files" \
        reset_cmd push_cmd
    printf '%s %s refs/heads/main\n' "$old" "$new" >"$push/update.txt"
    time_hook "hook-$commits" "the same update, guard hook pre-receive alone" "$push/update.txt"
    eval "$(reset_cmd hook)"

    # --- 4b. A push of 1,000 commits through the hook (issue 15) --------------------------------
    # The servers' main is set back 1,000 commits along its first-parent line, and main's tip is
    # pushed again: the client sends the 1,000 commits' objects (it cannot know the server has
    # them) and the hook judges all of them. guard's own share, as above, by hand.
    back=$(( commits / 20 ))
    [[ $back -le 1000 ]] || back=1000
    behind=$(git -C "$push/client" rev-parse "main~$back")
    many_cmd() { echo "git -C $(q "$push/client") push -q file://$(q "$push/$1.git") $old:refs/heads/main"; }
    rewind_cmd() { echo "git -C $(q "$push/$1.git") update-ref refs/heads/main $behind"; }
    eval "$(rewind_cmd hook)"
    pushed=$(GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
        git -C "$push/client" push file://"$push/hook.git" "$old:refs/heads/main" 2>&1) ||
        fail "the $back-commit push through the hook was rejected: $pushed"
    grep -q "guard: 1 ref update accepted, $back commits judged" <<<"$pushed" ||
        fail "the hook did not judge the $back commits: $pushed"
    echo "== push: $back commits into $commits commits"
    time_pushes "pushmany-$commits" "$back commits pushed onto $((commits - back)) commits" \
        rewind_cmd many_cmd
    printf '%s %s refs/heads/main\n' "$behind" "$old" >"$push/update-many.txt"
    time_hook "manyhook-$commits" "the same update, guard hook pre-receive alone" "$push/update-many.txt"
    for server in hook plain; do
        eval "$(reset_cmd "$server")"
    done

    # --- 4c. The same 1,000 commits pushed into servers that do not have them --------------------
    # As a real push of new work arrives: two bare clones whose only objects are those reachable
    # from main~1,000, packed as `git gc` packs them. The push's pack lands in the quarantine,
    # where guard reads it. Before each timed push the servers are put back: main at the old tip,
    # the pack the last push added (and any loose object) deleted.
    for server in newhook newplain; do
        (
            export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
            git clone -q --bare --no-local "$repo" "$push/$server.git"
            cd "$push/$server.git"
            git update-ref refs/heads/main "$behind"
            git for-each-ref --format='%(refname)' | grep -vx refs/heads/main |
                while read -r ref; do git update-ref -d "$ref"; done
            git reflog expire --expire=now --all
            git repack -adq
            git prune --expire=now
            git config receive.fsckObjects true
            ls objects/pack >base-packs.txt
        ) || fail "making the server $server.git for the push of new commits"
    done
    "$root/install.sh" --server "$push/newhook.git" --guard "$GUARD" >/dev/null 2>&1 ||
        fail "install.sh --server $push/newhook.git --guard $GUARD"
    new_cmd() { echo "git -C $(q "$push/client") push -q file://$(q "$push/$1.git") $old:refs/heads/main"; }
    # Back to the state before the push: the old tip, only the packs the server started with.
    restore_cmd() {
        local dir
        dir=$(q "$push/$1.git")
        echo "git -C $dir update-ref refs/heads/main $behind && cd $dir/objects && { ls pack | grep -vxFf ../base-packs.txt || true; } | sed 's|^|pack/|' | xargs -r rm -f && find . -maxdepth 1 -name '??' -exec rm -rf {} +"
    }
    for server in newhook newplain; do
        eval "$(restore_cmd "$server")"
    done
    pushed=$(GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
        git -C "$push/client" push file://"$push/newhook.git" "$old:refs/heads/main" 2>&1) ||
        fail "the $back-commit push of new commits through the hook was rejected: $pushed"
    grep -q "guard: 1 ref update accepted, $back commits judged" <<<"$pushed" ||
        fail "the hook did not judge the $back new commits: $pushed"
    [[ $(git -C "$push/newhook.git" rev-parse main) == "$old" ]] || fail "the push of new commits did not land"
    eval "$(restore_cmd newhook)"
    [[ $(git -C "$push/newhook.git" rev-parse main) == "$behind" ]] || fail "the server was not put back"
    git -C "$push/newhook.git" cat-file -e "$old" 2>/dev/null && fail "the pushed commits were not deleted"
    echo "== push: $back new commits into $commits commits"
    # Through a shell (no -N): putting a server back is a pipeline.
    time_new_pushes() {
        load_start
        GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null hyperfine "${push_runs[@]}" --style basic \
            --export-json "$out/pushnew-$commits.json" \
            --prepare "$(restore_cmd newhook)" -n "git push, guard's hook" "$(new_cmd newhook)" \
            --prepare "$(restore_cmd newplain)" -n "git push, no hook" "$(new_cmd newplain)"
        load_end
        printf '%s\t0\t%s\t%s\n' "pushnew-$commits" \
            "$back new commits pushed onto $((commits - back)) commits (the server lacks them)" \
            "$other_load" >>"$out/groups.tsv"
    }
    time_new_pushes
    for server in newhook newplain; do
        eval "$(restore_cmd "$server")"
    done

    # --- 5. A push of many tags at commits main already holds -------------------------------
    # A mirror or a tag import: $tag_count new lightweight tags at commits of main's first-parent
    # line, pushed at once into the same two servers. Before each timed push the server's tags
    # are deleted again. guard.timeout is left at its default.
    tags="$push/tags"
    git -C "$push/client" rev-list --first-parent main |
        awk -v n="$tag_count" 'NR <= n {printf "create refs/tags/bench-tag-%05d %s\n", NR, $1}' >"$tags.create"
    [[ $(wc -l <"$tags.create") -eq $tag_count ]] || fail "main has fewer than $tag_count commits for the tags"
    git -C "$push/client" update-ref --stdin <"$tags.create" || fail "making the tags"
    sed 's/^create \([^ ]*\) .*/delete \1/' "$tags.create" >"$tags.delete"
    awk '{printf "0000000000000000000000000000000000000000 %s %s\n", $3, $2}' "$tags.create" >"$tags.updates"
    tag_push_cmd() {
        echo "git -C $(q "$push/client") push -q file://$(q "$push/$1.git") 'refs/tags/bench-tag-*:refs/tags/bench-tag-*'"
    }
    untag_cmd() { echo "git -C $(q "$push/$1.git") update-ref --stdin < $(q "$tags.delete")"; }

    # Correctness first: the hook accepts the push within its default time, judging no commit.
    pushed=$(GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
        git -C "$push/client" push file://"$push/hook.git" 'refs/tags/bench-tag-*:refs/tags/bench-tag-*' 2>&1) ||
        fail "the push of $tag_count tags through the hook was rejected: $(grep -v '^ ! ' <<<"$pushed" | head -5)"
    grep -q "guard: $tag_count ref updates accepted, 0 commits judged" <<<"$pushed" ||
        fail "the hook did not judge the tags: $(head -5 <<<"$pushed")"
    for server in hook plain; do
        eval "$(untag_cmd "$server")"
    done

    echo "== tags: $tag_count new tags into $commits commits"
    # Through a shell (no -N): the tag deletion reads its standard input from a file.
    time_pushes "tags-$commits" \
        "$tag_count new tags at commits main holds, pushed onto $commits commits" \
        untag_cmd tag_push_cmd "${slow_runs[@]}"
    for server in hook plain; do
        eval "$(untag_cmd "$server")"
    done
    time_hook "taghook-$commits" "the same $tag_count ref updates, guard hook pre-receive alone" \
        "$tags.updates"
fi

# --- 6. Fixtures from git: guard check vs openssl and sha256sum ----------------------------
# A repository whose commit B adds group 2's corpus (the same files, hard-linked) with its
# lockfile, on top of a commit A holding the policy and an empty lockfile: `guard check A..B`
# hashes every fixture from its blob (inflated from a pack, as a push brings them), on every
# core. The peers hash the same files in the checkout.
for spec in "${fixture_sizes[@]}"; do
    selected gitfixtures || continue
    read -r mib nfiles <<<"$spec"
    fproj="$data/fixtures-$mib"
    grepo="$data/gitfixtures-$mib"
    corpus=$(cut -c1-16 <<<"$(sha256sum <"$fproj.stamp")")
    if ! fresh "$grepo.stamp" gitfixtures "$mib" "$nfiles" "$corpus"; then
        echo "== generating $grepo (the $mib MiB corpus committed)"
        rm -rf "$grepo"
        (
            export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
            export GIT_AUTHOR_NAME="Alice Moreau" GIT_AUTHOR_EMAIL=alice@example.com
            export GIT_COMMITTER_NAME="Alice Moreau" GIT_COMMITTER_EMAIL=alice@example.com
            git init -q -b main "$grepo"
            mkdir -p "$grepo/qa"
            printf 'version = 1\n\n[fixtures]\nlockfile = "qa/fixtures.lock.json"\npaths = ["tests/fixtures/"]\n' \
                >"$grepo/qa/merge_ledger.toml"
            printf 'version = 1\n' >"$grepo/qa/freeze.toml"
            echo '{"files": {}}' >"$grepo/qa/fixtures.lock.json"
            git -C "$grepo" add -A
            git -C "$grepo" commit -q -m "Start the project" -m "Ledger-Change: human
Freeze-Lease: human
Fixture-Lock: human"
            git -C "$grepo" tag bench/A
            cp -al "$fproj/tests" "$grepo/tests"
            cp "$fproj/qa/fixtures.lock.json" "$grepo/qa/fixtures.lock.json"
            git -C "$grepo" add -A
            git -C "$grepo" commit -q -m "Add the fixture corpus" -m "Fixture-Lock: human"
            git -C "$grepo" repack -q -ad
        ) || fail "making $grepo"
        stamp_of gitfixtures "$mib" "$nfiles" "$corpus" >"$grepo.stamp"
    fi
    list="$grepo.files"
    (cd "$grepo" && find tests/fixtures -type f | LC_ALL=C sort) >"$list"
    bytes=$(cd "$grepo" && xargs -d '\n' stat -c %s <"$list" | awk '{s += $1} END {print s}')
    pack=$(du -cb "$grepo"/.git/objects/pack/*.pack | awk 'END {print $1}')

    # Warm the page cache for both sides, then check guard's answer.
    (cd "$grepo" && xargs -d '\n' cat <"$list" >/dev/null && cat .git/objects/pack/*.pack >/dev/null)
    report=$("$GUARD" -C "$grepo" check bench/A..main) || fail "guard check in $grepo exited $?"
    grep -qx 'decision: MERGE.*' <<<"$report" || fail "guard check in $grepo did not say MERGE"

    echo "== gitfixtures: $nfiles files, $bytes bytes, a $pack-byte pack"
    load_start
    cdp="cd $(q "$grepo") &&"
    hyperfine "${slow_runs[@]}" --style basic --export-json "$out/gitfixtures-$mib.json" \
        -n "guard check A..B" "$(q "$GUARD") -C $(q "$grepo") check bench/A..main" \
        -n "openssl dgst -sha256" "$cdp xargs -d '\\n' openssl dgst -sha256 < $(q "$list") > /dev/null" \
        -n "sha256sum" "$cdp xargs -d '\\n' sha256sum < $(q "$list") > /dev/null"
    load_end
    printf 'gitfixtures-%s\t%s\t%s files from git blobs\t%s\n' "$mib" "$bytes" "$nfiles" "$other_load" >>"$out/groups.tsv"
    rss "gitfixtures-$mib guard check A..B" "$GUARD" -C "$grepo" check bench/A..main
done

# --- 7. History scan on the articles' layout and on merge-heavy histories (issue 15) -------
for spec in "${history_specs[@]}"; do
    selected histories || continue
    read -r name commits want gen_args <<<"$spec"
    repo="$data/$name.git"
    # shellcheck disable=SC2086 # the generator's options, one word each
    if ! fresh "$repo.stamp" history "$commits" $gen_args; then
        echo "== generating $repo ($commits commits: $gen_args)"
        rm -rf "$repo" "$repo-nograph"
        "$here/gen_history.sh" "$repo" "$commits" $gen_args
        stamp_of history "$commits" $gen_args >"$repo.stamp"
    fi
    a=$(git -C "$repo" rev-parse bench/A)
    b=$(git -C "$repo" rev-parse main)
    range_commits=$(git -C "$repo" rev-list --count "$a..$b")
    merges=$(git -C "$repo" rev-list --merges --count "$a..$b")
    hits=$(git -C "$repo" log --format=%H "$a..$b" -- "${protected[@]}" | wc -l)
    [[ $hits -gt 0 ]] || fail "git log found no protected-path commits in $repo"

    # Correctness first: guard must decide as the generator meant (MERGE; with --reject,
    # REJECT for missing trailers), and the commits that are not merges and change protected
    # paths must be git's (what a merge brings is judged by guard's own rules, so merges are
    # left out of the comparison).
    json="$out/$name.report.json"
    status=0
    "$GUARD" -C "$repo" check "$a..$b" --format json >"$json" || status=$?
    [[ $status -eq $want ]] || fail "guard check $a..$b in $repo exited $status, expected $want"
    git -C "$repo" log --no-merges --format=%H "$a..$b" -- "${protected[@]}" >"$json.git"
    git -C "$repo" rev-list --merges "$a..$b" >"$json.merges"
    python3 - "$json" "$want" <<'PY' || fail "guard check $a..$b in $repo: wrong answer (above)"
import json, sys
report, want = sys.argv[1], int(sys.argv[2])
d = json.load(open(report))
git = set(open(report + ".git").read().split())
merges = set(open(report + ".merges").read().split())
guard = {c["id"] for c in d["commits"] if c.get("protected_changes") and c["id"] not in merges}
expected = ("MERGE", []) if want == 0 else ("REJECT", ["missing_human_trailer"])
ok = (d["decision"], d["reasons"]) == expected and guard == git
if not ok:
    print(f"decision {d['decision']} {d['reasons']}, expected {expected}; "
          f"{len(guard)} non-merge commits change protected paths, git says {len(git)}: "
          f"only guard {sorted(guard - git)[:3]}, only git {sorted(git - guard)[:3]}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
    rm -f "$json" "$json.git" "$json.merges"
    nograph=$(without_graph "$repo" "$repo")
    cmp -s <("$GUARD" -C "$repo" check "$a..$b") <("$GUARD" -C "$nograph" check "$a..$b") ||
        fail "guard check $a..$b: the report without a commit-graph differs from the one with it"

    verdict=MERGE
    [[ $want -eq 0 ]] || verdict=REJECT
    desc="$range_commits commits in A..B ($merges merges; $hits in git's log), guard says $verdict"
    history_bench "$name" "$repo" "$a" "$b" "$want" "$desc"
    history_bench "$name-nograph" "$nograph" "$a" "$b" "$want" "$desc, no commit-graph"
    # The articles' layout has 40% agent commits: against git's log over everything its
    # ledger protects or reads (defaults included, test files and Rust files too), as for a
    # real history (issue 33's agent-heavy target).
    if [[ $name == articles-* ]]; then
        saved=("${protected[@]}")
        ledger_dir=$(mktemp -d)
        mkdir -p "$ledger_dir/qa"
        git -C "$repo" show "$b:qa/merge_ledger.toml" >"$ledger_dir/qa/merge_ledger.toml"
        mapfile -t protected < <(cd "$ledger_dir" && python3 "$here/ledger_pathspec.py" qa/merge_ledger.toml)
        rm -rf "$ledger_dir"
        history_bench "agentheavy-$commits" "$repo" "$a" "$b" "$want" "$desc, git's log over the ledger's paths"
        history_bench "agentheavy-$commits-nograph" "$nograph" "$a" "$b" "$want" "$desc, no commit-graph, git's log over the ledger's paths"
        protected=("${saved[@]}")
    fi
done

# --- 8. A real project's history: pytest from 5.3.0 (issue 33) ---------------------------
# pytest's own history (a clone GUARD_BENCH_PYTEST names: this machine has no network),
# rewritten with `guard init`'s starter ledger (made at 5.3.0) in every root commit, repacked
# as `git repack -adf --window=50 --depth=50`, with a commit-graph and without one. The peer
# is git's log over the same paths: what that ledger protects or reads
# (`ledger_pathspec.py`), Rust and test files included.
if selected realhistory; then
    src=${GUARD_BENCH_PYTEST:-}
    if [[ -z $src || ! -d $src ]]; then
        echo "== realhistory: skipped (set GUARD_BENCH_PYTEST to a clone of pytest-dev/pytest)"
    else
        repo="$data/pytest-rw.git"
        stamp="$(git -C "$src" rev-parse HEAD) $("$GUARD" --version)"
        if [[ ! -f $repo.stamp || "$(cat "$repo.stamp")" != "$stamp" ]]; then
            echo "== rewriting pytest's history into $repo"
            rm -rf "$data/pytest-wt" "$repo" "$repo-nograph"
            git clone -q --shared "$src" "$data/pytest-wt"
            git -C "$data/pytest-wt" checkout -q 5.3.0
            (cd "$data/pytest-wt" && "$GUARD" init >/dev/null)
            git init -q --bare "$repo"
            git -C "$data/pytest-wt" fast-export --all --signed-tags=strip \
                --tag-of-filtered-object=drop --reencode=yes 2>/dev/null |
                python3 "$here/add_root_files.py" "$data/pytest-wt" qa/merge_ledger.toml \
                    qa/freeze.toml qa/fixtures.lock.json |
                git -C "$repo" fast-import --quiet
            git -C "$repo" repack -q -adf --window=50 --depth=50
            git -C "$repo" commit-graph write --reachable
            echo "$stamp" >"$repo.stamp"
        fi
        saved=("${protected[@]}")
        mapfile -t protected < <(cd "$data/pytest-wt" && python3 "$here/ledger_pathspec.py" qa/merge_ledger.toml)
        a=$(git -C "$repo" rev-parse 5.3.0)
        b=$(git -C "$repo" rev-parse main)
        range_commits=$(git -C "$repo" rev-list --count "$a..$b")
        # pytest's history has agent edits of protected paths and no trailers: REJECT.
        status=0
        "$GUARD" -C "$repo" check "$a..$b" >/dev/null || status=$?
        [[ $status -eq 1 ]] || fail "guard check 5.3.0..main on pytest exited $status, expected 1"
        nograph=$(without_graph "$repo" "$repo")
        desc="pytest 5.3.0..main, $range_commits commits, the starter ledger, guard says REJECT"
        history_bench pytest-5.3.0 "$repo" "$a" "$b" 1 "$desc"
        history_bench pytest-5.3.0-nograph "$nograph" "$a" "$b" 1 "$desc, no commit-graph"
        protected=("${saved[@]}")
    fi
fi

python3 "$here/summarize.py" "$out" | tee "$out/summary.md"
echo "results: $out"
