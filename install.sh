#!/usr/bin/env bash
# Build guard in release mode and install it as PREFIX/bin/guard (default ~/.local/bin/guard).
#
#   ./install.sh                 install into ~/.local/bin
#   ./install.sh --prefix DIR    install into DIR/bin
set -euo pipefail

prefix="${HOME:?HOME is not set; pass --prefix}/.local"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "error: --prefix needs a directory" >&2; exit 2; }; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
command -v cargo >/dev/null || { echo "error: cargo not found; install Rust from https://rustup.rs" >&2; exit 2; }
cargo build --release --locked --manifest-path "$here/Cargo.toml"
mkdir -p "$prefix/bin"
# Copy then rename, so a hook running the old binary never sees a half-written file.
install -m 0755 "$here/target/release/guard" "$prefix/bin/.guard.new"
mv -f "$prefix/bin/.guard.new" "$prefix/bin/guard"
echo "installed $prefix/bin/guard ($("$prefix/bin/guard" --version))"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH; add it, or call $prefix/bin/guard" ;;
esac
