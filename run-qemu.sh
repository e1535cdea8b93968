#!/bin/bash
# Boot baretrace under QEMU (TCG) with its serial console on stdout.
#
#   ./run-qemu.sh [--uefi] [--smp N[,maxcpus=M]] [--machine pc|q35] [--memory M] [--icount]
#                 [--no-hpet] [--cpu MODEL] [--cmdline "..."] [--timeout S]
#                 [--serial FILE] [--kernel ELF] [--grub-cmds "..."]
#                 [--serial-port com1|com2|pci] [--usb] [--no-debug-exit]
#                 [--usb-image FILE [--usb-port N] [--usb-xhci PROPS]] [--usb-kbd]
#                 [--usb-image2 FILE [--usb-port2 N]]
#                 [--reboot] [--mem-file FILE] [--monitor SOCKET]
#                 [--qemu PATH] [-- extra qemu args]
#
# --reboot: no -no-reboot: a guest reset (triple fault, the shell's reboot,
# panic.action=reboot, the monitor's system_reset) boots the same image
# again in the same QEMU, RAM as the firmware leaves it, so a test sees the
# next boot. The exit status rules below do not change: the run still ends
# only with the kernel's verdict, a timeout or QEMU's own exit.
# --mem-file FILE: back guest RAM with FILE (created at --memory's size if
# absent, kept afterwards; share=on), so that a test can read or damage RAM
# while QEMU is stopped, or boot a second QEMU on what the first one left.
# --monitor SOCKET: QEMU's monitor (HMP) on a Unix socket at that path, for
# system_reset, stop and cont from a test.
#
# --serial-port: where the console chardev (stdout) is attached: COM1 (the
# default), COM2 only (0x2F8, no COM1), or a PCI 16550 card (no COM1).
# --usb: boot the image as a USB stick on an xHCI controller, not a CD.
# --usb-image FILE: boot FILE (a stick's raw image made by make usb-image,
# e.g. build/baretrace-usb.img) as a writable USB stick on a qemu-xhci
# controller, no CD: its own GRUB, its own kernel; its writes stay in FILE.
# With --cmdline, the line is written first into FILE's BARETRACE
# partition as CMDLINE.CFG (scripts/usb-cmdline.sh), which the stick's GRUB
# boots with; without, the stick boots as it is (its CMDLINE.CFG, else its
# built-in line). --kernel and --grub-cmds do not apply to it.
# --usb-port N: the stick on the controller's port N (QEMU's port=N, 1..4).
# --usb-xhci PROPS: more qemu-xhci properties, e.g. p3=0 (no USB 3 ports:
# the stick comes up at high speed on a USB 2 port). docs/usb.md.
# --usb-image2 FILE: a second writable stick (a raw image, any content) on
# the same controller as --usb's or --usb-image's stick (needs one of them),
# e.g. one without a BARETRACE partition beside the boot one; --usb-port2 N
# its port (without it, QEMU's next free one).
# --usb-kbd: a USB keyboard (usb-kbd) on the xHCI controller (the stick's,
# else one of its own); type on it with the monitor's sendkey (--monitor).
# --no-debug-exit: no isa-debug-exit device, as on real hardware.
# --qemu PATH: the QEMU binary (default: $QEMU, else qemu-system-x86_64 on
# PATH). One in an unpacked Debian tree (PREFIX/bin/qemu-system-x86_64 with
# PREFIX/share/qemu, e.g. build/qemu10/usr from scripts/qemu10.sh) gets
# that tree's firmware and modules.
#
# Exit status: 0 the kernel reported success; 1 it reported failure;
# 124 timeout; 3 QEMU exited without a verdict (e.g. triple fault with
# -no-reboot); 2 QEMU itself failed (bad option, missing firmware, ...).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
uefi=0 smp=1 machine=q35 memory=512M icount=0 hpet=1 cpu=max
cmdline="" cmdline_set=0 grub_cmds="" timeout_s="" serial_file=""
kernel="$here/build/kernel.elf" kernel_set=0
serial_port=com1 usb=0 usb_image="" usb_port="" usb_image2="" usb_port2="" usb_xhci="" usb_kbd=0 debug_exit=1 reboot=0 mem_file="" monitor="" qemu=${QEMU:-qemu-system-x86_64}
extra=()

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
die() { echo "run-qemu.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--uefi) uefi=1 ;;
	--smp) smp=${2:?--smp needs a number}; shift ;;
	--machine) machine=${2:?--machine needs pc or q35}; shift ;;
	--memory) memory=${2:?--memory needs a size}; shift ;;
	--icount) icount=1 ;;
	--no-hpet) hpet=0 ;;
	--cpu) cpu=${2:?--cpu needs a model}; shift ;;
	--cmdline) cmdline=${2?--cmdline needs a string}; cmdline_set=1; shift ;;
	--grub-cmds) grub_cmds=${2?--grub-cmds needs a string}; shift ;;
	--timeout) timeout_s=${2:?--timeout needs seconds}; shift ;;
	--serial) serial_file=${2:?--serial needs a file}; shift ;;
	--kernel) kernel=${2:?--kernel needs a file}; kernel_set=1; shift ;;
	--serial-port) serial_port=${2:?--serial-port needs com1, com2 or pci}; shift ;;
	--usb) usb=1 ;;
	--usb-image) usb_image=${2:?--usb-image needs a file}; shift ;;
	--usb-port) usb_port=${2:?--usb-port needs a number}; shift ;;
	--usb-image2) usb_image2=${2:?--usb-image2 needs a file}; shift ;;
	--usb-port2) usb_port2=${2:?--usb-port2 needs a number}; shift ;;
	--usb-xhci) usb_xhci=${2:?--usb-xhci needs properties}; shift ;;
	--usb-kbd) usb_kbd=1 ;;
	--no-debug-exit) debug_exit=0 ;;
	--qemu) qemu=${2:?--qemu needs a path}; shift ;;
	--reboot) reboot=1 ;;
	--mem-file) mem_file=${2:?--mem-file needs a file}; shift ;;
	--monitor) monitor=${2:?--monitor needs a socket path}; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
	shift
done

case "$machine" in pc|q35) ;; *) die "--machine must be pc or q35, not '$machine'" ;; esac
case "$serial_port" in com1|com2|pci) ;; *) die "--serial-port must be com1, com2 or pci, not '$serial_port'" ;; esac
[[ "$smp" =~ ^[1-9][0-9]*(,maxcpus=[1-9][0-9]*)?$ ]] ||
	die "--smp must be N or N,maxcpus=M (positive integers), not '$smp'"
[ -z "$timeout_s" ] || [[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be whole seconds, not '$timeout_s'"
[ -n "$usb_image" ] || [ -f "$kernel" ] || die "no kernel at $kernel: run 'make' first"
[ -z "$usb_image" ] || [ -f "$usb_image" ] || die "--usb-image: no file '$usb_image'"
[ -z "$usb_port" ] || [[ "$usb_port" =~ ^[1-9][0-9]*$ ]] || die "--usb-port must be a port number, not '$usb_port'"
[ -z "$usb_image" ] || [ $usb -eq 0 ] || die "--usb-image and --usb each add a stick: use one"
[ -z "$usb_image" ] || [ $kernel_set -eq 0 ] ||
	die "--kernel: --usb-image's stick boots its own kernel (make usb-image puts it there)"
[ -z "$usb_image" ] || [ -z "$grub_cmds" ] ||
	die "--grub-cmds: --usb-image's stick boots with its own GRUB configuration"
[ -z "$usb_image2" ] || [ -f "$usb_image2" ] || die "--usb-image2: no file '$usb_image2'"
[ -z "$usb_image2" ] || [ $usb -eq 1 ] || [ -n "$usb_image" ] ||
	die "--usb-image2 adds a second stick: give the first with --usb or --usb-image"
[ -z "$usb_port2" ] || [ -n "$usb_image2" ] || die "--usb-port2 is the port of --usb-image2's stick: give it"
[ -z "$usb_port2" ] || [[ "$usb_port2" =~ ^[1-9][0-9]*$ ]] || die "--usb-port2 must be a port number, not '$usb_port2'"
[ -z "$usb_port2" ] || [ "$usb_port2" != "$usb_port" ] || die "--usb-port2 must differ from --usb-port ($usb_port)"
qemu_path=$(command -v "$qemu") || die "QEMU '$qemu' not found: run 'make deps' (for build/qemu10: 'make deps-qemu10')"

if [ -n "$usb_image" ]; then
	# The stick carries the command line: CMDLINE.CFG in its BARETRACE
	# partition, written with mtools (TRACE.BIN is left as it is).
	[ $cmdline_set -eq 0 ] || "$here/scripts/usb-cmdline.sh" "$usb_image" "$cmdline" || exit 2
else
	# One cached image per kernel file and command line; rebuilt when the
	# kernel or scripts/mkiso.sh (the GRUB configuration) is newer.
	cache="$here/build/iso-cache"
	mkdir -p "$cache"
	key=$(printf '%s\n%s\n%s' "$(realpath "$kernel")" "$cmdline" "$grub_cmds" | sha1sum | cut -c1-16)
	iso="$cache/$key.iso"
	if [ ! -f "$iso" ] || [ "$kernel" -nt "$iso" ] || [ "$here/scripts/mkiso.sh" -nt "$iso" ]; then
		"$here/scripts/mkiso.sh" "$kernel" "$iso" "$cmdline" "$grub_cmds" || exit 2
	fi
fi

machine_opt="$machine"
[ $hpet -eq 1 ] || machine_opt="$machine,hpet=off"
args=(-machine "$machine_opt" -cpu "$cpu" -smp "$smp" -m "$memory" -display none)
[ $reboot -eq 1 ] || args+=(-no-reboot)
if [ -n "$mem_file" ]; then
	# RAM in a host file: what the guest leaves there outlives the run.
	args+=(-object "memory-backend-file,id=mem,size=$memory,mem-path=$mem_file,share=on"
	       -machine memory-backend=mem)
fi
if [ -n "$usb_image" ]; then
	# The stick boots itself (bootindex=1; no CD): SeaBIOS from its MBR,
	# OVMF from its EFI system partition, as a real machine's firmware.
	args+=(-drive "if=none,id=stick,format=raw,file=$usb_image"
	       -device "qemu-xhci,id=xhci${usb_xhci:+,$usb_xhci}"
	       -device "usb-storage,bus=xhci.0,drive=stick,bootindex=1${usb_port:+,port=$usb_port}")
elif [ $usb -eq 1 ]; then
	# A USB stick: the ISO is a hybrid image (MBR + GPT-style EFI partition).
	# snapshot=on: the guest's writes never reach the cached image.
	args+=(-drive "if=none,id=stick,format=raw,file=$iso,snapshot=on"
	       -device qemu-xhci,id=xhci -device usb-storage,bus=xhci.0,drive=stick,bootindex=1)
else
	args+=(-cdrom "$iso" -boot d)
fi
if [ -n "$usb_image2" ]; then
	# On the first stick's controller: xhci exists by now (--usb or --usb-image).
	args+=(-drive "if=none,id=stick2,format=raw,file=$usb_image2"
	       -device "usb-storage,bus=xhci.0,drive=stick2${usb_port2:+,port=$usb_port2}")
fi
if [ $usb_kbd -eq 1 ]; then
	[ $usb -eq 1 ] || [ -n "$usb_image" ] || args+=(-device "qemu-xhci,id=xhci${usb_xhci:+,$usb_xhci}")
	args+=(-device usb-kbd,bus=xhci.0)
fi
[ $debug_exit -eq 0 ] || args+=(-device isa-debug-exit,iobase=0xf4,iosize=0x04)
if [ $uefi -eq 1 ]; then
	ovmf=/usr/share/ovmf/OVMF.fd
	[ -f $ovmf ] || die "$ovmf not found: install the ovmf package (make deps)"
	args+=(-bios "$ovmf")
fi
# A QEMU unpacked outside /usr looks for firmware and modules where its
# package would have put them, i.e. in the system QEMU's directories: point
# it at its own (-L: searched first). Modules the tree lacks would still be
# loaded from the system's directory and refused as another build's; only
# audio probing asks for them here, and the guest has no sound.
prefix=$(cd "$(dirname "$qemu_path")/.." && pwd)
if [ "$prefix" != /usr ] && [ -d "$prefix/share/qemu" ]; then
	for d in "$prefix/share/qemu" "$prefix/share/seabios"; do
		[ ! -d "$d" ] || args+=(-L "$d")
	done
	[ ! -d "$prefix/lib/x86_64-linux-gnu/qemu" ] ||
		export QEMU_MODULE_DIR="$prefix/lib/x86_64-linux-gnu/qemu"
	args+=(-audiodev none,id=noaudio -machine pcspk-audiodev=noaudio)
fi
# sleep=off: a halted guest skips to its next timer instead of waiting in
# real time, so icount runs are bit-for-bit reproducible.
[ $icount -eq 0 ] || args+=(-icount shift=0,sleep=off)

# signal=off: Ctrl-C on the terminal is a byte for the kernel (it cancels
# the shell's command, a dump included), not SIGINT for QEMU and the trace
# in it. Quit with Ctrl-A X (a terminal: the mux's escape) or the kernel's
# poweroff; without a terminal, by closing stdin or killing QEMU.
chardev="stdio,id=con0,signal=off"
[ -z "$serial_file" ] || chardev="$chardev,logfile=$serial_file,logappend=off"
case "$serial_port" in
com1) port_args=(-serial chardev:con0) ;;
com2) port_args=(-serial none -device isa-serial,chardev=con0,iobase=0x2f8,irq=3) ;;
pci) port_args=(-serial none -device pci-serial,chardev=con0) ;;
esac
if [ -n "$monitor" ]; then
	args+=(-chardev "$chardev" "${port_args[@]}" -monitor "unix:$monitor,server=on,wait=off")
elif [ -t 0 ]; then
	args+=(-chardev "$chardev,mux=on" "${port_args[@]}" -mon chardev=con0,mode=readline)
else
	args+=(-chardev "$chardev" "${port_args[@]}" -monitor none)
fi

# --foreground: QEMU stays in this script's process group (plain timeout
# gives it one of its own), so that killing the group ends QEMU too.
if [ -n "$timeout_s" ]; then
	timeout --foreground -k 5 "$timeout_s" "$qemu_path" "${args[@]}" "${extra[@]}"
else
	"$qemu_path" "${args[@]}" "${extra[@]}"
fi
rc=$?
case $rc in
33) exit 0 ;;
35) exit 1 ;;
124|137) echo "run-qemu.sh: timed out after ${timeout_s}s" >&2; exit 124 ;;
0) echo "run-qemu.sh: QEMU exited without a verdict from the kernel" >&2; exit 3 ;;
*) echo "run-qemu.sh: QEMU failed (status $rc)" >&2; exit 2 ;;
esac
