# Sourced by scripts/deps.sh and scripts/bench-host.sh: which Debian packages
# of a list are missing, and how to install them.

# missing_pkgs PKG...: print the ones not installed, space-separated.
missing_pkgs() {
	local p st out=()
	for p in "$@"; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$st" = "install ok installed" ] || out+=("$p")
	done
	echo "${out[*]}"
}

# install_pkgs PKG...: apt-get install them (as root; returns apt-get's status).
install_pkgs() {
	export DEBIAN_FRONTEND=noninteractive
	timeout 300 apt-get update -q >/dev/null &&
		timeout 900 apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

# The command a user without root runs.
install_cmd() {
	echo "apt-get update && apt-get install -y --no-install-recommends $*"
}
