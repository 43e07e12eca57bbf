#!/usr/bin/env bash
# CPythons newer than this machine's, for tests/cli/test_pyframes.py: Debian unstable's
# python3.13, python3.14 and python3.15 packages (and the C library they were built against),
# unpacked under DIR with apt's own client and a private package list: nothing is installed
# system-wide but patchelf, which points each interpreter at its own C library. Prints the
# interpreters, colon-separated, for PYFRAMES_PYTHONS; exit 1 when none could be had.
#   PYFRAMES_PYTHONS=$(tests/inject/debian_pythons.sh build/pythons) make test
set -uo pipefail
dir=${1:?usage: debian_pythons.sh DIR}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
apt_dir=$dir/apt root=$dir/root
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$root"
# the machine's own Debian archive (the first one its apt sources name), its unstable suite
uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources \
      2>/dev/null | grep -v security | head -1)
[ -n "$uri" ] || uri=$(awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}' \
                       /etc/apt/sources.list 2>/dev/null)
[ -n "$uri" ] || { echo "debian_pythons.sh: no Debian archive in apt's sources" >&2; exit 1; }
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri sid main" \
    >"$apt_dir/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
      -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
      -o "APT::Sandbox::User=root")
command -v patchelf >/dev/null || apt-get install -y -qq patchelf >&2 || exit 1
apt-get "${opts[@]}" update -qq >&2 || exit 1
# the interpreters, their standard library, and what they and ctypes link against
pkgs=(libc6 libexpat1 zlib1g libffi8 libmpdec4 libzstd1 liblzma5 libbz2-1.0 libssl3t64)
for v in 3.13 3.14 3.15; do
    pkgs+=("python$v-minimal" "libpython$v-minimal" "libpython$v-stdlib")
done
(cd "$apt_dir/debs" && apt-get "${opts[@]}" download "${pkgs[@]}" >&2) || exit 1
for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$root" || exit 1; done
lib=$root/usr/lib/x86_64-linux-gnu
found=()
for v in 3.13 3.14 3.15; do
    py=$root/usr/bin/python$v
    [ -x "$py" ] || continue
    patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$py" &&
        "$py" -c 'import ctypes, json, threading, multiprocessing, traceback' >&2 && found+=("$py")
done
[ ${#found[@]} -gt 0 ] || exit 1
(IFS=:; echo "${found[*]}")
