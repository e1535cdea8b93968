"""Parsers and checks that more than one QEMU test module uses.

They live here, not in one test module imported by another, so that every
test file depends only on helpers and conftest.py (fixtures and the boot
itself), and each parser of a kernel line has one definition.
"""
import re

# smp.c: a skew bound wider than 20 us is no bound.
SKEW_UNCERT_MAX_NS = 20000


def within_20us(uncert, hz):
    """The kernel's threshold, from its definition: uncert cycles at hz last
    at most 20 us."""
    return uncert * 10**9 <= SKEW_UNCERT_MAX_NS * hz


def per_cpu_fields(r, pattern):
    """{cpu: {field: int}} from the lines matching pattern (each has cpu=)."""
    out = {}
    for l in r.all(pattern):
        f = {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", l)}
        out[f["cpu"]] = f
    return out


def smp_lines(r):
    """The smp: line each CPU prints once brought up (apic_id, skew, bound, warps)."""
    return per_cpu_fields(r, r"^smp: cpu=\d+ apic_id=")


def smp_warnings(r):
    """{cpu: [reason, ...]} from the smp: cpu=N WARNING: lines, in the order printed."""
    out = {}
    for cpu, why in re.findall(r"^smp: cpu=(\d+) WARNING: (.*)$", "\n".join(r.lines), re.M):
        out.setdefault(int(cpu), []).append(why)
    return out


def check_all_up(r, n, strict):
    """All n CPUs online and measured. strict: every skew must be bounded
    (icount, where the emulator is deterministic). Under plain TCG a loaded
    host can keep the boot CPU's and an AP's vCPU threads from running at
    the same time for the whole measurement (round trips of a host time
    slice, milliseconds; seen with 6 busy loops on the 2 cores). The AP is
    then untrusted: it must say so loudly, for a reason its own line bears
    out, and stay out of the ordering test; every trusted CPU must have a
    bound within the limit."""
    assert r.rc == 0, r.out
    online = r.fields(r"^smp: online=")
    assert int(online["online"]) == n and int(online["present"]) == n, online
    cpus = smp_lines(r)
    assert sorted(cpus) == list(range(n))
    assert len({c["apic_id"] for c in cpus.values()}) == n
    # The first reason printed.
    untrusted = {cpu: whys[0] for cpu, whys in smp_warnings(r).items()}
    if strict:
        assert not untrusted, r.out
    hz = int(r.fields(r"^tsc: freq_hz=")["freq_hz"])
    for cpu, c in cpus.items():
        why = untrusted.get(cpu)
        if why is None:
            assert within_20us(c["uncertainty_cycles"], hz), c
        elif why.startswith("skew bound "):
            assert not within_20us(c["uncertainty_cycles"], hz), (c, why)
            assert why.endswith("its stamps are marked untrusted"), why
        else:
            assert re.match(r"TSC measurement did not complete \(.* timed out\); its stamps "
                            r"are marked untrusted$", why), why
        assert c["warps"] == 0
        assert c["uncertainty_cycles"] >= 0
        # The measured skew lies within its own bound of the truth, which
        # under QEMU is 0 (every vCPU reads the same host TSC).
        assert abs(c["tsc_skew_cycles"]) <= c["uncertainty_cycles"] + 1, c
    assert sorted(per_cpu_fields(r, r"^clock: cpu=\d+ ")) == list(range(n))
    results = r.ktap()
    assert all(results.values()), r.out
    order = r.fields(r"^ktest: cross_cpu_order ")
    trusted = n - len(untrusted)
    assert int(order["pairs"]) == trusted * (trusted - 1)
    assert int(order["untrusted_pairs"]) == n * (n - 1) - trusted * (trusted - 1)
    assert int(order["violations"]) == 0
    return cpus


def ppb(decimal):
    """A printed "[-]<ppm>.<3 digits>" figure as integer ppb (exact)."""
    neg = decimal.startswith("-")
    whole, frac = decimal.lstrip("-").split(".")
    v = int(whole) * 1000 + int(frac)
    return -v if neg else v


def acpi_tool(r, tmp_path, tool):
    """baretrace-acpi (tool: its path) on the kernel's acpi.dump output in run r.
    Checks that the tool prints the kernel's own acpi: lines (those that say
    what the kernel's test facilities rewrote aside) and returns (exit status,
    its output's lines, {field: value} of its machine: line)."""
    import subprocess
    capture = tmp_path / "capture.txt"
    capture.write_text(r.out)
    t = subprocess.run([tool, str(capture)], capture_output=True, text=True, timeout=60)
    assert "runtime error" not in t.stderr and "Sanitizer" not in t.stderr, t.stderr
    out = t.stdout.splitlines()
    kernel_acpi = [l for l in r.lines if l.startswith("acpi: ") and "RSDP found" not in l
                   and "inject.acpi=" not in l]
    assert [l for l in out if l.startswith("acpi: ")] == kernel_acpi, t.stdout
    assert out[-2].startswith("machine: ") and out[-1].startswith("verdict: "), t.stdout
    return t.returncode, out, dict(kv.split("=", 1) for kv in out[-2].split()[1:])
