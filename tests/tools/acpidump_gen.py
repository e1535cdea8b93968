"""Hand-made ACPI tables written as acpidump text, for baretrace-acpi's tests.

Every table's content is chosen here, so what the tool reports can be compared
with what was put in. The text is ACPICA's acpidump format (see tools/acpidump.h)."""
import struct


def table(sig, body, rev=1, oem=b"HANDMD"):
    length = 36 + len(body)
    hdr = bytearray(sig.encode() + struct.pack("<IBB", length, rev, 0) + oem +
                    b"TESTTBL " + struct.pack("<I4sI", 1, b"HOST", 1))
    t = hdr + bytes(body)
    t[9] = (-sum(t)) & 0xFF
    return bytes(t)


def madt(entries, lapic=0xFEE00000, flags=0):
    return table("APIC", struct.pack("<II", lapic, flags) + b"".join(entries), rev=5)


def lapic(uid, apic_id, flags=1):
    return struct.pack("<BBBBI", 0, 8, uid, apic_id, flags)


def x2apic(apic_id, uid, flags=1):
    return struct.pack("<BBHIII", 9, 16, 0, apic_id, flags, uid)


def lapic_addr(addr):
    return struct.pack("<BBHQ", 5, 12, 0, addr)


def other(typ, length):
    return bytes([typ, length]) + bytes([0xAA] * (length - 2))


def fadt(pm_tmr_blk=0x608, tmr_32=False, hw_reduced=False, length=276):
    b = bytearray(length - 36)
    struct.pack_into("<I", b, 76 - 36, pm_tmr_blk)
    b[91 - 36] = 4 if pm_tmr_blk else 0
    flags = (1 << 8 if tmr_32 else 0) | (1 << 20 if hw_reduced else 0)
    struct.pack_into("<I", b, 112 - 36, flags)
    return table("FACP", b, rev=6)


def hpet(base=0xFED00000):
    b = bytearray(20)
    struct.pack_into("<I", b, 0, 0x8086A201)
    struct.pack_into("<BBBBQ", b, 4, 0, 64, 0, 0, base)
    return table("HPET", b)


def spcr(iface=0, space=1, addr=0x3F8, width=8, baud_code=7, rev=2, clock=0, precise=0,
         length=None):
    """SPCR: interface type, base address as a GAS, configured baud code (7 =
    115200); rev 3 adds the UART clock at 76, rev 4 the precise baud rate at 80."""
    length = length or (88 if rev >= 4 else 80)
    b = bytearray(max(length, 88) - 36)
    b[0] = iface
    struct.pack_into("<BBBBQ", b, 4, space, width, 0, 1, addr)
    b[58 - 36] = baud_code
    if rev >= 3:
        struct.pack_into("<I", b, 76 - 36, clock)
    if rev >= 4:
        struct.pack_into("<I", b, 80 - 36, precise)
    return table("SPCR", bytes(b[:length - 36]), rev=rev)


def text(tables):
    """tables: [(address, bytes)] -> acpidump text."""
    out = []
    for addr, t in tables:
        out.append(f"{t[:4].decode('latin-1')} @ 0x{addr:016X}")
        for off in range(0, len(t), 16):
            chunk = t[off:off + 16]
            hexpart = "".join(f"{c:02X} " for c in chunk).ljust(48)
            asc = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
            out.append(f"{off:04X}".rjust(8) + f": {hexpart} {asc}")
        out.append("")
    return "\n".join(out) + "\n"
