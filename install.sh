#!/usr/bin/env bash
# Install guard, and its git hooks.
#
#   ./install.sh [--prefix DIR]                  build guard and install it as DIR/bin/guard
#                                                (default ~/.local)
#   ./install.sh --static [--prefix DIR]         the same, statically linked (glibc's static
#                                                libraries): runs where no shared library is,
#                                                as in a GitHub Enterprise hook environment
#   ./install.sh --hooks REPO                    install the pre-push hook into a clone
#   ./install.sh --server BARE_REPO [--gitlab|--gitea]
#                                                install the pre-receive hook into a bare
#                                                repository (hooks/, or GitLab's
#                                                custom_hooks/pre-receive.d/, or Gitea's
#                                                hooks/pre-receive.d/)
#   ... --no-audit-log                           with --server: leave guard.auditLog unset (by
#                                                default it is set to BARE_REPO/guard-audit.log)
#   ... --uninstall                              remove the hook, restoring what was there
#   ... --guard PATH                             use this guard binary instead of building one
#                                                (without it, --hooks and --server use the
#                                                guard an earlier ./install.sh installed while
#                                                it is newer than this checkout's sources, else
#                                                build and install one)
#
# A hook that is already there is never overwritten: it is kept as HOOK.guard-chained and
# still runs first (its failure still rejects). Installing twice is harmless. core.hooksPath
# is honoured. --server also sets receive.fsckObjects = true when neither it nor
# transfer.fsckObjects is set (an existing setting is kept; --uninstall leaves it).
set -euo pipefail

die() { echo "error: $*" >&2; exit 2; }

prefix=""
mode=binary
target=""
flavour=plain
uninstall=false
guard_bin=""
static=false
audit_log=true
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --hooks) [ $# -ge 2 ] || die "--hooks needs a repository"; mode=hooks; target="$2"; shift 2 ;;
    --server) [ $# -ge 2 ] || die "--server needs a bare repository"; mode=server; target="$2"; shift 2 ;;
    --gitlab) flavour=gitlab; shift ;;
    --gitea) flavour=gitea; shift ;;
    --uninstall) uninstall=true; shift ;;
    --guard) [ $# -ge 2 ] || die "--guard needs a path"; guard_bin="$2"; shift 2 ;;
    --static) static=true; shift ;;
    --no-audit-log) audit_log=false; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done
[ "$flavour" = plain ] || [ "$mode" = server ] || die "--gitlab and --gitea go with --server"
! $static || [ -z "$guard_bin" ] || die "--static builds guard; it does not go with --guard"

here="$(cd "$(dirname "$0")" && pwd)"

# Says that DIR is not on PATH and prints the line that puts it there for the user's shell.
path_note() {
  local dir="$1" rc line
  case "${SHELL##*/}" in
    zsh) rc="~/.zshrc"; line="export PATH=\"$dir:\$PATH\"" ;;
    fish) rc="~/.config/fish/config.fish"; line="fish_add_path $dir" ;;
    *) rc="~/.bashrc"; line="export PATH=\"$dir:\$PATH\"" ;;
  esac
  {
    echo "note: $dir is not on PATH, so \`guard\` alone will not find it. Add this line to $rc"
    echo "and open a new shell (or call $dir/guard):"
    echo
    echo "    $line"
  } >&2
}

install_binary() {
  local dest="${prefix:-${HOME:?HOME is not set; pass --prefix}/.local}"
  command -v cargo >/dev/null || die "cargo not found; install Rust from https://rustup.rs"
  local target_dir="${CARGO_TARGET_DIR:-$here/target}" built
  # The first build compiles every dependency (libgit2 from C among them): minutes, not seconds.
  echo "building guard (release; the first build takes a few minutes, later ones only recompile guard)" >&2
  if $static; then
    # glibc links statically on its own gnu target (the musl target is not needed). An
    # explicit --target keeps RUSTFLAGS away from build scripts and proc macros, which must
    # stay dynamic. guard needs nothing of glibc's NSS (no user or host name lookups that
    # matter: without HOME, libgit2 finds no global config, as git itself on a server).
    local host
    host="$(rustc -vV | sed -n 's/^host: //p')"
    case "$host" in
      *-linux-gnu) ;;
      *) die "--static builds with glibc's static libraries on a *-linux-gnu host, not on $host" ;;
    esac
    RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-feature=+crt-static" \
      cargo build --release --locked --target "$host" --manifest-path "$here/Cargo.toml" >&2
    built="$target_dir/$host/release/guard"
    # glibc's ldd says "statically linked" (static-pie) or "not a dynamic executable".
    if command -v ldd >/dev/null && ldd "$built" 2>&1 | grep -q '=>'; then
      die "$built is dynamically linked: $(ldd "$built" 2>&1 | tr '\n' ' ')"
    fi
  else
    cargo build --release --locked --manifest-path "$here/Cargo.toml" >&2
    built="$target_dir/release/guard"
  fi
  mkdir -p "$dest/bin"
  # Copy then rename, so a hook running the old binary never sees a half-written file.
  install -m 0755 "$built" "$dest/bin/.guard.new"
  mv -f "$dest/bin/.guard.new" "$dest/bin/guard"
  echo "installed $dest/bin/guard ($("$dest/bin/guard" --version))" >&2
  case ":$PATH:" in
    *":$dest/bin:"*) ;;
    *) path_note "$dest/bin" ;;
  esac
  guard_bin="$dest/bin/guard"
}

if [ "$mode" = binary ]; then
  $uninstall && die "--uninstall goes with --hooks or --server"
  install_binary
  exit 0
fi

# The guard installed by an earlier `./install.sh`, when it is newer than every source file
# and manifest of this checkout: installing hooks then does not build again (a release
# build checks and relinks for a minute even when nothing changed).
installed_current() {
  local installed="${prefix:-${HOME:-/nonexistent}/.local}/bin/guard" want
  [ -x "$installed" ] || return 1
  # Everything the build reads: the sources, the ledger and freeze file compiled in, the
  # manifests and cargo's own configuration.
  [ -z "$(find "$here/src" "$here/policy" "$here/Cargo.toml" "$here/Cargo.lock" "$here/.cargo" -newer "$installed" -print -quit 2>/dev/null)" ] || return 1
  # And it is this checkout's guard (another program called guard answers otherwise).
  want="guard $(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/Cargo.toml" | head -n 1)"
  [ "$("$installed" --version 2>/dev/null)" = "$want" ] || return 1
  guard_bin="$installed"
  echo "using $installed (installed, and newer than this checkout's sources; run ./install.sh to rebuild)" >&2
}

[ -d "$target" ] || die "$target is not a directory"
command -v git >/dev/null || die "git not found"
if ! $uninstall; then
  if [ -z "$guard_bin" ] && ! $static; then installed_current || install_binary; fi
  if [ -z "$guard_bin" ]; then install_binary; fi
  [ -x "$guard_bin" ] || die "$guard_bin is not an executable guard"
  guard_bin="$(cd "$(dirname "$guard_bin")" && pwd)/$(basename "$guard_bin")"
  case "$guard_bin" in *$'\n'*) die "the guard path must not contain a newline" ;; esac
fi

git_dir="$(git -C "$target" rev-parse --absolute-git-dir 2>/dev/null)" || die "$target is not a git repository"
if [ "$mode" = server ] && [ "$(git -C "$target" rev-parse --is-bare-repository)" != true ]; then
  die "$target is not a bare repository (use --hooks for a clone)"
fi
hook=pre-push
[ "$mode" = server ] && hook=pre-receive

case "$flavour" in
  gitlab) dir="$git_dir/custom_hooks/pre-receive.d"; file="$dir/merge-guard" ;;
  gitea) dir="$git_dir/hooks/pre-receive.d"; file="$dir/merge-guard" ;;
  plain)
    # `--git-path hooks` honours core.hooksPath (relative paths are from the work tree).
    dir="$(cd "$target" && git rev-parse --git-path hooks)"
    case "$dir" in /*) ;; *) dir="$(cd "$target" && pwd)/$dir" ;; esac
    file="$dir/$hook" ;;
esac

is_ours() { [ -f "$1" ] && grep -q 'merge-guard hook shim' "$1"; }

if $uninstall; then
  if is_ours "$file"; then
    rm -f "$file"
    if [ -e "$file.guard-chained" ]; then
      mv "$file.guard-chained" "$file"
      echo "removed guard's $hook hook from $dir; restored the hook that was there" >&2
    else
      echo "removed guard's $hook hook from $dir" >&2
    fi
  else
    echo "guard's $hook hook is not installed in $dir; nothing to do" >&2
  fi
  exit 0
fi

mkdir -p "$dir"
if [ -e "$file" ] && ! is_ours "$file"; then
  [ "$flavour" = plain ] || die "$file exists and is not guard's; move it away first"
  [ -e "$file.guard-chained" ] && die "$file and $file.guard-chained both exist; resolve by hand"
  mv "$file" "$file.guard-chained"
  echo "kept the existing $hook hook as $file.guard-chained; it still runs first" >&2
fi
# Write to a temp file and rename: a push running right now sees the old or the new hook.
tmp="$(mktemp "$dir/.guard-hook.XXXXXX")"
# The path lands in a single-quoted shell string via a sed replacement: quote it for both,
# or a path with ', &, # or \ would give a broken shim (which rejects every push).
quoted="$(printf '%s' "$guard_bin" | sed "s/'/'\\\\''/g" | sed 's/[\\&#]/\\&/g')"
sed "s#@GUARD@#$quoted#" "$here/hooks/$hook" >"$tmp"
chmod 0755 "$tmp"
mv -f "$tmp" "$file"
echo "installed $file (runs $guard_bin)" >&2

if [ "$mode" = server ]; then
  # git checks pushed objects (malformed trees, bad ids) only with fsck on; guard's hook
  # warns on every push while it is off. A setting already made (either key, any scope) is
  # the admin's decision and is kept.
  receive="$(git -C "$target" config --get receive.fsckObjects || true)"
  transfer="$(git -C "$target" config --get transfer.fsckObjects || true)"
  if [ -z "$receive" ] && [ -z "$transfer" ]; then
    git -C "$target" config receive.fsckObjects true
    echo "set receive.fsckObjects = true in $git_dir/config: git checks the objects of every push" >&2
  else
    echo "kept receive.fsckObjects = ${receive:-unset}, transfer.fsckObjects = ${transfer:-unset} (guard's hook warns on each push while git does not check pushed objects)" >&2
  fi
  # guard remembers deleted protected refs (so that one made again at an old commit is
  # judged as the rewind it is) and logs break-glass pushes in its audit log; without one,
  # the hook refuses the deletions the ledger allows (guard.allowDelete accepts them).
  log="$(git -C "$target" config --get guard.auditLog || true)"
  if [ -n "$log" ]; then
    echo "kept guard.auditLog = $log" >&2
  elif $audit_log; then
    log="$git_dir/guard-audit.log"
    git -C "$target" config guard.auditLog "$log"
    echo "set guard.auditLog = $log (the hook creates it, mode 0600, at the first deletion or break-glass push)" >&2
  else
    echo "left guard.auditLog unset (--no-audit-log): deleting a protected ref is refused, and break-glass has nowhere to be logged" >&2
  fi
fi
