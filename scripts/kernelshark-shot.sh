#!/bin/bash
# A screenshot of KernelShark showing a baretrace capture, made in a virtual
# display (Xvfb), for docs/ (docs/trace-dat.md).
#
#   scripts/kernelshark-shot.sh [CAPTURE] [OUT.png]
#
# Without CAPTURE, boots `make run`'s configuration (4 CPUs, q35, the demo)
# with a binary dump and no shell, and uses that capture.  OUT defaults to
# docs/kernelshark.png.  Installs kernelshark, xvfb, x11-apps (xwd) and
# imagemagick through scripts/deps.sh.  KernelShark warns in a dialog when
# run as root, so as root it runs as the user nobody.
set -euo pipefail
cd "$(dirname "$0")/.."
cap=${1:-}
out=${2:-docs/kernelshark.png}
work=build/kernelshark
scripts/deps.sh --only kernelshark xvfb x11-apps imagemagick
mkdir -p "$work"
rm -rf "$work/home" && mkdir -m 700 "$work/home"
make -s tools
if [ -z "$cap" ]; then
	make -s kernel
	cap=$work/capture.bin
	./run-qemu.sh --timeout 120 --smp 4 --machine q35 --serial "$cap" \
		--cmdline "run=demo exit dump=bin dump.last=0" > "$work/qemu.log"
fi
rc=0
build/tools/baretrace-decode "$cap" --quiet --trace-dat "$work/trace.dat" || rc=$?
[ "$rc" -le 1 ] || [ "$rc" -eq 4 ] || { echo "kernelshark-shot: decoding failed ($rc)" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
# A free display: Xvfb writes its number on fd 3 once it is ready.
Xvfb -displayfd 3 -screen 0 1400x900x24 -nolisten tcp 3> "$work/display" 2> "$work/xvfb.log" &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/display" ] && break; sleep 0.2; done
[ -s "$work/display" ] || { echo "kernelshark-shot: Xvfb did not start" >&2; exit 1; }
export DISPLAY=:$(cat "$work/display")

run_as=()
if [ "$(id -u)" -eq 0 ]; then
	chown nobody "$work/home"
	chmod 644 "$work/trace.dat"
	run_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
HOME=$PWD/$work/home XDG_RUNTIME_DIR=$PWD/$work/home "${run_as[@]}" \
	kernelshark -geometry 1400x900+0+0 "$PWD/$work/trace.dat" > "$work/kernelshark.log" 2>&1 &
pids+=($!)
# Wait for its window, then for the trace to be drawn.
for _ in $(seq 120); do
	xwininfo -root -tree 2>/dev/null | grep -q '"Kernel Shark (' && break
	sleep 0.5
done
xwininfo -root -tree | grep -q '"Kernel Shark (' ||
	{ echo "kernelshark-shot: no KernelShark window (see $work/kernelshark.log)" >&2; exit 1; }
sleep 5
xwd -root -silent | /usr/bin/convert xwd:- "$out"
colors=$(/usr/bin/convert "$out" -format %k info:)
[ "$colors" -gt 16 ] || { echo "kernelshark-shot: $out looks empty ($colors colours)" >&2; exit 1; }
echo "kernelshark-shot: $out ($colors colours) from $cap"
