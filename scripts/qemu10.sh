#!/bin/bash
# Fetch QEMU 10 from Debian's bookworm-backports into build/qemu10/ (once),
# for the x2APIC tests: QEMU 7.2's TCG, Debian 12's own, has no x2APIC.
# The system QEMU stays as it is and runs every other test.
#
# apt-get runs with its own sources list, package lists and cache under a
# temporary directory and only downloads (the system's apt.conf still
# applies, e.g. a proxy, but not its hooks run after an update): /etc/apt
# and the system's package state are never touched. The packages are
# unpacked with dpkg-deb -x, not installed, so no root is needed. QEMU 10 uses the shared libraries
# that Debian 12's qemu-system-x86 (scripts/deps.sh) brings in; a library
# still missing is named with the package to install.
#
# Usage: scripts/qemu10.sh    (prints nothing when build/qemu10/ is there)
# DEBIAN_MIRROR=URL picks another mirror (default http://deb.debian.org/debian).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest="$here/build/qemu10"
bin="$dest/usr/bin/qemu-system-x86_64"
release=bookworm-backports
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
pkgs=(qemu-system-x86 qemu-system-common qemu-system-data seabios)

fail() { echo "deps: $*" >&2; exit 1; }

# The libraries the binary and its modules need that are not installed,
# and the packages, from the .debs' Depends, that are not installed.
check_libs() {
	local missing
	missing=$(ldd "$bin" "$dest"/usr/lib/x86_64-linux-gnu/qemu/*.so 2>/dev/null |
		awk '/not found/ { print $1 }' | sort -u || true)
	[ -z "$missing" ] && return 0
	echo "deps: QEMU 10 in $dest needs libraries that are not installed:" $missing >&2
	if [ -f "$dest/depends.txt" ]; then
		local p need=()
		for p in $(cat "$dest/depends.txt"); do
			[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
				need+=("$p")
		done
		[ ${#need[@]} -eq 0 ] ||
			echo "deps: install them as root:  apt-get install -y --no-install-recommends ${need[*]}" >&2
	fi
	exit 1
}

if [ -x "$bin" ] && [ -f "$dest/version.txt" ]; then
	check_libs
	exit 0
fi

echo "deps: fetching QEMU 10 from $release for the x2APIC tests (13 MB; 86 MB in build/qemu10/)"
for t in apt-get dpkg-deb ldd; do
	command -v $t >/dev/null || fail "$t not found: this script needs Debian's apt and dpkg"
done
mkdir -p "$here/build"
tmp=$(mktemp -d "$here/build/qemu10.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/etc/sources.list.d" "$tmp/etc/preferences.d" "$tmp/lists/partial" \
	"$tmp/cache/archives/partial" "$tmp/debs" "$tmp/root"
echo "deb $mirror $release main" > "$tmp/etc/sources.list"
printf '#clear APT::Update::%s;\n' Pre-Invoke Post-Invoke Post-Invoke-Success > "$tmp/apt.conf"
apt_opts=(-q -c "$tmp/apt.conf" -o "Dir::Etc::sourcelist=$tmp/etc/sources.list"
	-o "Dir::Etc::sourceparts=$tmp/etc/sources.list.d"
	-o "Dir::Etc::preferences=$tmp/etc/preferences"
	-o "Dir::Etc::preferencesparts=$tmp/etc/preferences.d"
	-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache"
	# As root apt would download as the _apt user, who may not write here.
	-o "APT::Sandbox::User=$(id -un)")

apt-get "${apt_opts[@]}" --error-on=any update > "$tmp/log" 2>&1 ||
	{ cat "$tmp/log" >&2; fail "cannot read the $release package lists from $mirror" \
		"(apt-get update failed, above); the x2APIC tests need QEMU 10 from there"; }
# name/release: that release's version, whatever the system has installed.
(cd "$tmp/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]/%//$release}") > "$tmp/log" 2>&1 ||
	{ cat "$tmp/log" >&2; fail "cannot download ${pkgs[*]} from $release (above)"; }
for d in "$tmp"/debs/*.deb; do
	dpkg-deb -x "$d" "$tmp/root" || fail "cannot unpack $d"
	# Library packages this one depends on (first alternative, no version).
	dpkg-deb -f "$d" Depends | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*//' -e 's/ //g' |
		grep '^lib' >> "$tmp/root/depends.txt" || true
done
"$tmp/root/usr/bin/qemu-system-x86_64" --version 2>/dev/null | head -1 > "$tmp/root/version.txt" ||
	echo "unknown (does not run)" > "$tmp/root/version.txt"
sort -u -o "$tmp/root/depends.txt" "$tmp/root/depends.txt"
rm -rf "$dest"
mv "$tmp/root" "$dest"
echo "deps: $(cat "$dest/version.txt") in build/qemu10/"
check_libs
