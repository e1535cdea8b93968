#!/bin/bash
# make bench-host: the trace write path on the host against its peers, side
# by side in one run. The method is in docs/bench-host.md.
#
#   1. prerequisites: Debian packages, installed with apt-get as root, else
#      the command to run is printed and the benchmark does what it can;
#   2. builds build/bench/bench-host (baretrace, floor) and, when
#      liblttng-ust-dev is there, build/bench/bench-host-lttng;
#   3. LTTng: starts lttng-sessiond if none runs (and stops it again at the
#      end), creates a snapshot session with one per-UID channel large enough
#      to hold every event of the run, enables the event, starts it;
#   4. rounds: each round runs every peer once (a fresh process: warm-up,
#      then one timed loop per thread), the order rotating from round to
#      round so that no peer always runs first;
#   5. LTTng: stops, records a snapshot and counts its events (babeltrace2)
#      against the events written, then destroys the session;
#   6. instructions per event: callgrind on one thread, M events minus 0;
#   7. bench/host/report.py: table, build/bench/host-results.txt, PNG plot.
#
# Knobs (environment or make variables): BENCH_THREADS (default: CPUs),
# BENCH_EVENTS (1000000 per thread per round), BENCH_WARMUP (100000),
# BENCH_REPS (rounds, 5), BENCH_BUF_BYTES (ring/array bytes per thread,
# 262144: the kernel's 64 pages), BENCH_VG_EVENTS (100000), BENCH_RT (1: run
# the peers under SCHED_FIFO when allowed; 0: normal scheduling), BENCH_LTTNG
# (1; 0 leaves LTTng out).
#
# Why SCHED_FIFO: the machines are shared, and a writer that another
# process's thread displaces from its CPU reports the other thread's time
# as its own (the wall time then runs 2-3x over the CPU time). At real-time
# priority the pinned writers keep their CPUs for the few hundred ms a
# process lasts; the kernel's RT throttling still leaves others 5%.
#
# Exit status: 0 when baretrace and the floor were measured (a peer that
# could not be, LTTng included, is reported as such); 1 when they could not
# be, or a check of theirs failed.
set -uo pipefail
cd "$(dirname "$0")/.."

MAKE=${MAKE:-make}
PYTHON=${PYTHON:-/usr/bin/python3}
OUT=build/bench
THREADS=${BENCH_THREADS:-$(nproc)}
EVENTS=${BENCH_EVENTS:-1000000}
WARMUP=${BENCH_WARMUP:-100000}
REPS=${BENCH_REPS:-5}
BUF=${BENCH_BUF_BYTES:-262144}
VG_EVENTS=${BENCH_VG_EVENTS:-100000}
RAW=$OUT/host-raw.txt
LTTNG_EVENT=baretrace_bench:event1
T_CMD=20		# seconds allowed to one lttng command
T_RUN=60		# ... to one benchmark process (a few hundred ms is usual)
T_VG=120		# ... to one valgrind run (LTTng's takes about 2 s)

say() { echo "bench-host: $*"; }

# ---- 1. prerequisites ---------------------------------------------------------
# gnuplot-nox draws the plot; babeltrace2 counts LTTng's events; the rest
# are the peers and the instruction counter.
pkgs=(gcc make libc6-dev python3 valgrind lttng-tools liblttng-ust-dev babeltrace2
      gnuplot-nox)
. scripts/debian-pkgs.sh
read -r -a missing <<< "$(missing_pkgs "${pkgs[@]}")"
if [ ${#missing[@]} -gt 0 ]; then
	say "missing Debian packages: ${missing[*]}"
	if [ "$(id -u)" -eq 0 ]; then
		say "installing with apt-get"
		install_pkgs "${missing[@]}" || say "apt-get failed; going on with what is installed"
	else
		say "run as root:  $(install_cmd "${missing[@]}")"
		say "going on with what is installed"
	fi
fi

# ---- 2. build -----------------------------------------------------------------
mkdir -p "$OUT"
if ! $MAKE --no-print-directory "$OUT/bench-host"; then
	say "the baretrace/floor benchmark did not build"
	exit 1
fi
lttng_na=""
if [ "${BENCH_LTTNG:-1}" = 0 ]; then
	lttng_na="left out (BENCH_LTTNG=0)"
elif [ -z "$(ls /usr/include/*/lttng/tracepoint.h /usr/include/lttng/tracepoint.h 2>/dev/null)" ]; then
	lttng_na="liblttng-ust-dev is not installed (apt-get install liblttng-ust-dev lttng-tools)"
elif ! $MAKE --no-print-directory "$OUT/bench-host-lttng"; then
	lttng_na="the LTTng-UST peer did not build (see the compiler's message above)"
fi

TMP=$(mktemp -d /tmp/bench-host.XXXXXX)
SESSION=""
SESSIOND_PID=""

cleanup() {
	if [ -n "$SESSION" ]; then
		timeout $T_CMD lttng destroy "$SESSION" >/dev/null 2>&1 ||
			say "warning: lttng destroy $SESSION failed"
		SESSION=""
	fi
	if [ -n "$SESSIOND_PID" ]; then	# only the daemon this script started
		kill "$SESSIOND_PID" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$SESSIOND_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$SESSIOND_PID" 2>/dev/null && kill -9 "$SESSIOND_PID" 2>/dev/null
		SESSIOND_PID=""
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Run an lttng command with a timeout; on failure say why in lt_err.
lt_err=""
lt() {
	local out
	if ! out=$(timeout $T_CMD lttng "$@" 2>&1); then
		lt_err="'lttng $1' failed: $(echo "$out" | grep -v '^$' | tail -1)"
		return 1
	fi
}

# ---- 3. LTTng session -----------------------------------------------------------
lttng_setup() {
	[ -z "$lttng_na" ] || return 1
	if ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null; then
		lttng_na="lttng-tools is not installed (apt-get install lttng-tools)"
		return 1
	fi
	if ! timeout $T_CMD lttng list >/dev/null 2>&1; then
		say "no LTTng session daemon: starting lttng-sessiond --daemonize --no-kernel"
		if ! timeout 30 lttng-sessiond --daemonize --no-kernel \
				--pidfile="$TMP/sessiond.pid" >"$TMP/sessiond.log" 2>&1; then
			lttng_na="lttng-sessiond failed to start: $(grep -v '^$' "$TMP/sessiond.log" | tail -1)"
			return 1
		fi
		SESSIOND_PID=$(cat "$TMP/sessiond.pid" 2>/dev/null)
		for _ in $(seq 50); do
			timeout 2 lttng list >/dev/null 2>&1 && break
			sleep 0.2
		done
		if ! timeout $T_CMD lttng list >/dev/null 2>&1; then
			lttng_na="lttng-sessiond started but does not answer"
			return 1
		fi
	fi
	# Every event of the run must fit: writers per CPU x rounds x events
	# (timed, warm-up, callgrind's), at most 16 bytes each (12 with LTTng's
	# compact header), in 4 MiB sub-buffers, plus one for the reader.
	local ncpu per_cpu bytes nsub=4
	ncpu=$(nproc)
	per_cpu=$(( (THREADS + ncpu - 1) / ncpu * (REPS * (EVENTS + WARMUP)) + VG_EVENTS ))
	bytes=$(( per_cpu * 16 ))
	while [ $(( (nsub - 1) * 4194304 )) -lt "$bytes" ]; do nsub=$((nsub * 2)); done
	LTTNG_SUBBUFS=$nsub
	SESSION="bench-host-$$"
	if ! lt create "$SESSION" --snapshot --output="$TMP/snapshot"; then
		SESSION=""
		lttng_na=$lt_err
		return 1
	fi
	lt enable-channel --userspace --session="$SESSION" --buffers-uid --overwrite \
		--subbuf-size=4M --num-subbuf="$nsub" benchchan &&
	lt enable-event --userspace --session="$SESSION" --channel=benchchan "$LTTNG_EVENT" &&
	lt start "$SESSION" || { lttng_na=$lt_err; return 1; }
}

RT=()
if [ "${BENCH_RT:-1}" = 1 ] && chrt -f 1 true 2>/dev/null; then
	RT=(chrt -f 1)
fi

# ---- machine facts ------------------------------------------------------------
: > "$RAW"
meta() { echo "meta: $1=$2" >> "$RAW"; }
cpu_model=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
cores=$(nproc)
meta machine "${cores}-core $( [ -n "$(grep -m1 hypervisor /proc/cpuinfo)" ] && echo VM || echo machine), ${cpu_model:-unknown CPU}"
meta cpu_model "${cpu_model:-unknown}"
meta cores "$cores"
meta kernel "$(uname -r)"
meta clocksource "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?')"
meta date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
meta commit "$(git describe --always --dirty 2>/dev/null || echo unknown) ($(git rev-parse HEAD 2>/dev/null || echo '?'))"
meta compiler "$(${HOSTCC:-gcc} --version | head -1)"
meta cflags "-O2 -DHOST_TRACE_NO_HOOKS (clock: rdtsc)"
meta lttng_tools "$(lttng --version 2>/dev/null | head -1 || true)"
meta lttng_ust "$(dpkg-query -W -f='${Version}' liblttng-ust1 2>/dev/null || echo none)"
meta valgrind "$(valgrind --version 2>/dev/null || echo none)"
meta threads "$THREADS"
meta events "$EVENTS"
meta warmup "$WARMUP"
meta reps "$REPS"
meta buf_bytes "$BUF"
meta vg_events "$VG_EVENTS"
meta sched "$( [ ${#RT[@]} -gt 0 ] && echo 'SCHED_FIFO 1 (chrt -f 1)' || echo 'SCHED_OTHER (normal)')"
meta load_before "$(cut -d' ' -f1-3 /proc/loadavg)"

if lttng_setup; then
	say "LTTng: session $SESSION, per-UID channel of $LTTNG_SUBBUFS x 4 MiB per CPU, snapshot mode"
else
	say "LTTng: not measured: $lttng_na"
fi

# ---- 4. rounds ------------------------------------------------------------------
peers=(floor baretrace)
[ -z "$lttng_na" ] && peers+=(lttng-ust)
fatal=0

run_peer() {	# peer round
	local p=$1 r=$2 bin=$OUT/bench-host rc
	[ "$p" = lttng-ust ] && bin=$OUT/bench-host-lttng
	timeout $T_RUN "${RT[@]}" "$bin" --peer="$p" --threads="$THREADS" --events="$EVENTS" \
		--warmup="$WARMUP" --reps=1 --buf-bytes="$BUF" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	sed -n "s/^\(bench-host-[a-z]*:\) /\1 round=$r /p" "$TMP/out" >> "$RAW"
	if [ $rc -ne 0 ]; then
		local why
		why="exit $rc$( [ $rc -eq 124 ] && echo ' (timed out)'): $(grep -v '^$' "$TMP/err" | tail -1)"
		grep -q "FAIL" "$TMP/out" && why="a check failed: $(grep FAIL "$TMP/out" | head -1)"
		if [ "$p" = lttng-ust ]; then
			lttng_na="the LTTng-UST peer failed in round $r: $why"
		else
			say "$p failed in round $r: $why"
			fatal=1
		fi
		return 1
	fi
}

say "${#peers[@]} peers, $THREADS threads x $EVENTS events, $REPS rounds"
for ((r = 1; r <= REPS; r++)); do
	n=${#peers[@]}
	for ((k = 0; k < n; k++)); do
		p=${peers[$(( (r - 1 + k) % n ))]}
		[ "$p" = lttng-ust ] && [ -n "$lttng_na" ] && continue
		run_peer "$p" "$r"
	done
	printf '  round %d of %d done\n' "$r" "$REPS"
done
[ $fatal -eq 0 ] || exit 1
if [ -n "$lttng_na" ]; then	# a late failure: drop LTTng's partial figures
	sed -i '/peer=lttng-ust/d' "$RAW"
fi

# ---- 5. LTTng: was every event recorded? -------------------------------------------
if [ -n "$SESSION" ] && [ -z "$lttng_na" ]; then
	lt stop "$SESSION" || say "warning: $lt_err"
	written=$(( THREADS * REPS * (EVENTS + WARMUP) ))
	echo "lttng: channel=per-UID snapshot/overwrite ${LTTNG_SUBBUFS}x4MiB per CPU" >> "$RAW"
	echo "lttng: events_written=$written" >> "$RAW"
	if ! command -v babeltrace2 >/dev/null; then
		echo "lttng: events_in_trace=unchecked (babeltrace2 missing)" >> "$RAW"
	elif lt snapshot record --session="$SESSION"; then
		counts=$(timeout 120 babeltrace2 "$TMP/snapshot" -c sink.utils.counter \
			-p step=+0 2>&1)
		ev=$(echo "$counts" | awk '/Event messages/ { n = $1 } END { print n }')
		de=$(echo "$counts" | awk '/Discarded event messages/ { n = $1 } END { print n }')
		dp=$(echo "$counts" | awk '/Discarded packet messages/ { n = $1 } END { print n }')
		echo "lttng: events_in_trace=${ev:-?} discarded_event_records=${de:-?} discarded_packet_records=${dp:-?}" >> "$RAW"
		if [ "${ev:-}" != "$written" ]; then
			say "warning: LTTng recorded ${ev:-?} events of $written written"
		fi
		rm -rf "$TMP/snapshot"
	else
		echo "lttng: events_in_trace=unchecked ($lt_err)" >> "$RAW"
	fi
fi

# ---- 6. instructions per event ----------------------------------------------------
# callgrind counts user-space instructions of the whole process; the same
# run with 0 events is subtracted. One thread, no warm-up.
count_instr() {	# peer binary
	local p=$1 bin=$2 n ir out
	if ! command -v valgrind >/dev/null; then
		echo "instr-na: peer=$p why=valgrind is not installed" >> "$RAW"
		return
	fi
	for n in 0 "$VG_EVENTS"; do
		out=$(timeout $T_VG valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			"$bin" --peer="$p" --threads=1 --events="$n" --warmup=0 --reps=1 \
			--buf-bytes="$BUF" 2>&1)
		ir=$(echo "$out" | sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p')
		if [ -z "$ir" ] || ! echo "$out" | grep -q "^bench-host-run:"; then
			echo "instr-na: peer=$p why=the run under valgrind failed: $(echo "$out" |
				grep -v '^==' | grep -v '^$' | tail -1)" >> "$RAW"
			return
		fi
		echo "instr: peer=$p events=$n ir=$ir" >> "$RAW"
	done
}
say "counting instructions (callgrind, 1 thread, $VG_EVENTS events minus 0)"
count_instr floor "$OUT/bench-host"
count_instr baretrace "$OUT/bench-host"
if [ -n "$SESSION" ] && [ -z "$lttng_na" ]; then
	if lt start "$SESSION"; then
		count_instr lttng-ust "$OUT/bench-host-lttng"
		lt stop "$SESSION" || true
	else
		echo "instr-na: peer=lttng-ust why=$lt_err" >> "$RAW"
	fi
fi
[ -n "$lttng_na" ] && echo "lttng-na: $lttng_na" >> "$RAW"

# ---- 7. report -------------------------------------------------------------------------
meta load_after "$(cut -d' ' -f1-3 /proc/loadavg)"
cleanup
trap - EXIT
echo
"$PYTHON" bench/host/report.py "$RAW" "$OUT/host-results.txt" "$OUT/host"
