#!/usr/bin/env bash
# Fetches c-toxcore 0.2.20 (Debian trixie's libtoxcore2 and the libvpx9 it links) and
# unpacks it into DEST, for the NGC group tests: nothing is installed, and the system's apt
# sources and state are not touched. apt reads a private sources list (trixie, on the same
# mirror as the system's own Debian entry, signed by the trixie key of debian-archive-keyring)
# with its own lists and cache under DEST/apt. The library runs on bookworm's libc.
#
# Usage: fetch_toxcore_0_2_20.sh DEST
# Afterwards: DEST/root/usr/lib/x86_64-linux-gnu/libtoxcore.so.2 (LD_LIBRARY_PATH) and
# DEST/include/tox/tox.h (the 0.2.20 header, from trixie's libtoxcore-dev). Prints DEST/root
# and exits 0 when both are there; a second run with both present does nothing.
set -euo pipefail

DEST="${1:?usage: $0 DEST}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"
ARCH_DIR="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
LIB="$DEST/root/usr/lib/$ARCH_DIR/libtoxcore.so.2"
HEADER="$DEST/include/tox/tox.h"
if [[ -e "$LIB" && -e "$HEADER" ]]; then
  echo "$DEST/root"
  exit 0
fi

# The mirror the system already uses for Debian (deb822 or one-line sources).
MIRROR=""
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -e "$f" ]] || continue
  if grep -q '^Suites:.*\bbookworm\b' "$f"; then
    MIRROR="$(awk '/^URIs:/ {print $2; exit}' "$f")"
    [[ -n "$MIRROR" ]] && break
  fi
done
if [[ -z "$MIRROR" && -e /etc/apt/sources.list ]]; then
  MIRROR="$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list)"
fi
if [[ -z "$MIRROR" ]]; then
  echo "no Debian mirror found in the system's apt sources" >&2
  exit 1
fi
KEYRING=/usr/share/keyrings/debian-archive-trixie-stable.gpg
[[ -e "$KEYRING" ]] || KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

APT="$DEST/apt"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$DEST/debs" "$DEST/root"
echo "deb [signed-by=$KEYRING] $MIRROR trixie main" >"$APT/trixie.list"
APT_OPTS=(
  -o "Dir::Etc::SourceList=$APT/trixie.list"
  -o "Dir::Etc::SourceParts=-"
  -o "Dir::State::Lists=$APT/lists"
  -o "Dir::Cache=$APT/cache"
  -o "Dir::State::status=/dev/null"
  -o "APT::Get::List-Cleanup=0"
  -o "Debug::NoLocking=1"
)
apt-get "${APT_OPTS[@]}" -qq update
(cd "$DEST/debs" && apt-get "${APT_OPTS[@]}" -qq download libtoxcore2 libvpx9 libtoxcore-dev)
for deb in "$DEST"/debs/*.deb; do
  dpkg-deb -x "$deb" "$DEST/root"
done
mkdir -p "$DEST/include"
cp -r "$DEST/root/usr/include/tox" "$DEST/include/"
if [[ ! -e "$LIB" || ! -e "$HEADER" ]]; then
  echo "libtoxcore.so.2 or tox.h missing after unpacking" >&2
  exit 1
fi
echo "$DEST/root"
