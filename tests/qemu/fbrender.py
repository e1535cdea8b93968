"""Host-side twin of the kernel's framebuffer console (kernel/fbcon.c): reads
the same PSF font file the build used, renders text with the same rules, and
converts screenshots (QEMU's screendump PPM) to PNG. Standard library only.

    python3 fbrender.py png SCREEN.ppm OUT.png
"""
import gzip
import struct
import sys
import zlib

FG = (0xAA, 0xAA, 0xAA)     # FBCON_FG
BG = (0x00, 0x00, 0x00)     # FBCON_BG
TAB = 8


class Font:
    """A PSF1 or PSF2 font: glyph bitmaps and the Latin-1 byte -> glyph map."""

    def __init__(self, path):
        data = gzip.open(path).read() if str(path).endswith(".gz") else open(path, "rb").read()
        if data[:2] == b"\x36\x04":
            mode, self.height = data[2], data[3]
            self.width, hdr, n = 8, 4, 512 if mode & 1 else 256
            has_table = mode & 6
        elif data[:4] == b"\x72\xb5\x4a\x86":
            _, _, hdr, flags, n, charsize, self.height, self.width = struct.unpack_from("<8I", data)
            has_table = flags & 1
        else:
            raise ValueError(f"{path}: not a PSF font")
        self.row_bytes = (self.width + 7) // 8
        size = self.height * self.row_bytes
        self.glyphs = [data[hdr + i * size: hdr + (i + 1) * size] for i in range(n)]
        table = data[hdr + n * size:]
        self.map = {}
        if not has_table:
            self.map = {c: c for c in range(min(256, n))}
        elif data[:2] == b"\x36\x04":
            self._map_psf1(table, n)
        else:
            self._map_psf2(table, n)

    def _map_psf1(self, table, n):
        pos = 0
        for g in range(n):
            seq = False
            while pos + 2 <= len(table):
                (cp,) = struct.unpack_from("<H", table, pos)
                pos += 2
                if cp == 0xFFFF:
                    break
                if cp == 0xFFFE:
                    seq = True
                elif not seq and cp < 256:
                    self.map.setdefault(cp, g)

    def _map_psf2(self, table, n):
        for g, entry in zip(range(n), table.split(b"\xff")):
            single = entry.split(b"\xfe")[0].decode("utf-8", "replace")
            for ch in single:
                if ord(ch) < 256:
                    self.map.setdefault(ord(ch), g)

    def glyph(self, byte):
        return self.glyphs[self.map.get(byte, self.map[ord("?")])]


def layout(data, cols, rows):
    """The text grid after writing data (bytes), following fbcon.c's rules."""
    grid = [[0x20] * cols for _ in range(rows)]
    row = col = 0

    def next_row():
        nonlocal row, col
        col = 0
        row += 1
        if row == rows:
            grid.pop(0)
            grid.append([0x20] * cols)
            row = rows - 1

    for b in data:
        if b == 0x0A:
            next_row()
        elif b == 0x0D:
            col = 0
        elif b == 0x08:
            col = max(col - 1, 0)
        elif b == 0x09:
            while True:
                if col < cols:
                    grid[row][col] = 0x20
                    col += 1
                if col % TAB == 0 or col >= cols:
                    break
        elif b < 0x20 or b == 0x7F:
            pass
        else:
            if col == cols:
                next_row()
            grid[row][col] = b
            col += 1
    return grid


def render(font, data, width, height):
    """RGB bytes (width x height) of the screen after writing data."""
    cols, rows = width // font.width, height // font.height
    grid = layout(data, cols, rows)
    fg, bg = bytes(FG), bytes(BG)
    out = bytearray(bg * (width * height))
    for r in range(rows):
        for c in range(cols):
            g = font.glyph(grid[r][c])
            for y in range(font.height):
                bits = g[y * font.row_bytes:(y + 1) * font.row_bytes]
                line = bytearray()
                for x in range(font.width):
                    line += fg if bits[x // 8] & (0x80 >> (x % 8)) else bg
                at = ((r * font.height + y) * width + c * font.width) * 3
                out[at:at + len(line)] = line
    return bytes(out), grid


def read_ppm(path):
    """(width, height, RGB bytes) of a binary PPM (P6, maxval 255)."""
    data = open(path, "rb").read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    if magic != b"P6" or maxval != 255:
        raise ValueError(f"{path}: not a P6 PPM with maxval 255")
    pixels = data[pos + 1:pos + 1 + w * h * 3]
    if len(pixels) != w * h * 3:
        raise ValueError(f"{path}: truncated")
    return w, h, pixels


def write_png(path, width, height, rgb):
    """An 8-bit RGB PNG, filter 0 on every row."""
    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    stride = width * 3
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))
    png = (b"\x89PNG\r\n\x1a\n" +
           chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
           chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    with open(path, "wb") as f:
        f.write(png)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "png":
        sys.exit(__doc__)
    write_png(sys.argv[3], *read_ppm(sys.argv[2]))
