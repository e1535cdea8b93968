"""Static keys (jump labels) and read-only kernel code.

The ktests (arch/x86/ktests_jump_label.c) under -smp 1..4 with plain TCG
and under icount, and a host-side check of build/kernel.elf: every
__jump_table site is, as built, the 5-byte NOP.
"""
import re
import struct
import subprocess

import pytest

from conftest import ROOT

ELF = ROOT / "build" / "kernel.elf"
KTESTS = ["static_key_patch_sites", "static_key_refuses_changed_site",
          "static_key_flip_stress", "static_key_off_cost", "text_read_only",
          "text_poke_bounds"]
NOP5 = bytes.fromhex("0f1f440000")
ENTRY = struct.Struct("<QQQ")           # struct jump_entry: code, target, key
FLIPS = 2000                            # STRESS_FLIPS in ktests_jump_label.c


def ints(fields):
    return {k: int(v, 0) for k, v in fields.items()}


def check_run(r, n, icount):
    assert r.rc == 0, r.out
    results = r.ktap()
    assert sorted(results) == sorted(KTESTS), r.out
    assert all(results.values()), r.out
    assert r.has(r"^text: kernel code 0x200000\.\.0x[0-9a-f]+ read-only"), r.out

    s = ints(r.fields(r"^ktest: static_key_flip_stress "))
    assert s["cpus"] == n and s["flips"] == FLIPS and s["refused"] == 0, s
    assert s["wrong"] == 0 and s["bsp_wrong"] == 0 and s["unmatched_cpus"] == 0, s
    # Each round calls three sites; every call returned one of its two values.
    assert s["taken"] + s["fall"] == 3 * (s["rounds"] + s["nmi_rounds"]), s
    if n > 1:
        # The other CPUs ran the sites, from task and NMI context, and met
        # sites in their int3 state: the emulation path ran.
        assert s["rounds"] > 0 and s["nmi_rounds"] > 0, s
        assert s["taken"] > 0 and s["fall"] > 0, s
        assert s["int3_emulated"] > 0, s
    else:
        assert s["rounds"] == 0 and s["nmis_sent"] == 0, s

    # The corrupted site is named twice (enable, disable), and nothing else.
    bad = int(r.fields(r"^ktest: static_key_refuses_changed_site corrupted=")["corrupted"], 0)
    lines = r.all(r"^static_key: ")
    want = rf"^static_key: site 0x{bad:x} \(kt_site_b\+0x[0-9a-f]+\) holds 90 90 90 90 90, not "
    assert len(lines) == 2, lines
    assert re.match(want + r"0f 1f 44 00 00; refused, left as it is$", lines[0]), lines
    assert re.match(want + r"e9 [0-9a-f]{2} [0-9a-f]{2} [0-9a-f]{2} [0-9a-f]{2}; refused, "
                    r"left as it is$", lines[1]), lines

    if icount:
        # One cycle is one instruction: 100 disabled sites cost 100.
        c = ints(r.fields(r"^ktest: static_key_off_cost "))
        assert c["cycles_per_100_sites"] == 100, c


@pytest.mark.parametrize("smp", [1, 2, 3, 4], ids=lambda n: f"smp{n}")
def test_static_key_ktests_tcg(qemu, smp):
    r = qemu("run=ktest ktest=" + ",".join(KTESTS) + " exit", smp=smp, timeout=300)
    check_run(r, smp, icount=False)


def test_static_key_ktests_icount(qemu):
    # clock=hpet: one calibration reference, not three (about 4 s of the boot
    # under icount); the costs here are counted in instructions.
    r = qemu("run=ktest ktest=" + ",".join(KTESTS) + " exit clock=hpet", smp=2, icount=True,
             timeout=400)
    check_run(r, 2, icount=True)


# ---- the image as built ----------------------------------------------------

PF_W = 2


def elf_loads(data):
    """[(vaddr, offset, filesz, memsz, flags)] of the PT_LOAD segments of an
    ELF64 little-endian file (the ELF header and program header layout)."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for i in range(phnum):
        p_type, flags, off, vaddr, _paddr, filesz, memsz = \
            struct.unpack_from("<IIQQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            out.append((vaddr, off, filesz, memsz, flags))
    return out


def read_at(data, loads, addr, n):
    for vaddr, off, filesz, _memsz, _flags in loads:
        if vaddr <= addr and addr + n <= vaddr + filesz:
            return data[off + addr - vaddr: off + addr - vaddr + n]
    raise AssertionError(f"0x{addr:x} is in no loaded segment")


def writable(loads, addr):
    return any(v <= addr < v + memsz and flags & PF_W for v, _o, _f, memsz, flags in loads)


def symbols(path):
    out = {}
    nm = subprocess.run(["nm", str(path)], check=True, capture_output=True, text=True).stdout
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3:
            out[parts[2]] = int(parts[0], 16)
    return out


def disassembly(path):
    """{address: (bytes, text)} of every instruction objdump decodes in .text."""
    out = {}
    od = subprocess.run(["objdump", "-d", "-j", ".text", "--wide", str(path)],
                        check=True, capture_output=True, text=True)
    for line in od.stdout.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(.*)$", line)
        if m:
            out[int(m.group(1), 16)] = (bytes.fromhex(m.group(2)), m.group(3).strip())
    return out


def check_elf_sites(path):
    """Every __jump_table entry of the image names a 5-byte NOP that objdump
    decodes as one instruction at that address, a target in .text and a key
    in writable data. Returns the number of sites."""
    data = path.read_bytes()
    loads = elf_loads(data)
    sym = symbols(path)
    start, stop = sym["__start_jump_table"], sym["__stop_jump_table"]
    assert (stop - start) % ENTRY.size == 0
    table = read_at(data, loads, start, stop - start)
    entries = [ENTRY.unpack_from(table, i) for i in range(0, len(table), ENTRY.size)]
    text = (sym["__text_start"], sym["__text_end"])
    insns = disassembly(path)
    for code, target, key in entries:
        where = f"site 0x{code:x}"
        assert text[0] <= code and code + 5 <= text[1], where
        assert text[0] <= target < text[1], where
        assert writable(loads, key), where
        assert read_at(data, loads, code, 5) == NOP5, \
            f"{where} holds {read_at(data, loads, code, 5).hex(' ')}, not {NOP5.hex(' ')}"
        assert code in insns, f"{where} is not an instruction boundary for objdump"
        raw, asm = insns[code]
        assert raw == NOP5 and asm.startswith("nopl") and "0x0(%rax,%rax,1)" in asm, (where, asm)
    assert len({c for c, _, _ in entries}) == len(entries), "a site is listed twice"
    return entries, sym


def owner(sym, addr):
    """The symbol with the highest address at or below addr."""
    return max(((a, n) for n, a in sym.items() if a <= addr), default=(0, "?"))[1]


def test_every_site_is_a_nop_in_the_elf():
    """Mutation tried: the site emitted as 66 90 0f 1f 00 (two NOPs, five
    bytes): fails here, as it does in the icount off-cost check."""
    entries, sym = check_elf_sites(ELF)
    # The ktests' own sites are among them, counted by the function holding each.
    where = [owner(sym, code) for code, _, _ in entries]
    assert [where.count(f) for f in ("kt_site_a", "kt_site_b", "kt_site_c")] == [1, 1, 1], where
    assert where.count("kt_cost_lo") == 20 and where.count("kt_cost_hi") == 120, where
