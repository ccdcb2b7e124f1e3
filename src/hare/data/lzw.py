"""Decoder for Unix ``compress`` (``.Z``) files, needed for UCI's ``shuttle.trn.Z``.

Implements the LZW variant of ncompress 4.x: codes of 9 to ``maxbits`` bits packed
least-significant-bit first, read in chunks of ``n_bits`` bytes (8 codes); the rest of a
chunk is discarded whenever the code width changes or a CLEAR code (256, block mode only)
resets the table.
"""

from __future__ import annotations

MAGIC = b"\x1f\x9d"
CLEAR = 256


class LZWError(ValueError):
    """The input is not a valid ``compress`` stream."""


class _CodeReader:
    """Yields codes the way ncompress' ``getcode`` does."""

    def __init__(self, data: bytes, maxbits: int):
        self.data = data
        self.pos = 3
        self.maxbits = maxbits
        self.maxmaxcode = 1 << maxbits
        self.n_bits = 9
        self.maxcode = (1 << 9) - 1
        self.chunk = 0
        self.offset = 0
        self.size = 0
        self.clear_flag = False

    def read(self, free_ent: int) -> int:
        if self.clear_flag or self.offset >= self.size or free_ent > self.maxcode:
            if free_ent > self.maxcode:
                self.n_bits += 1
                self.maxcode = self.maxmaxcode if self.n_bits == self.maxbits else (1 << self.n_bits) - 1
            if self.clear_flag:
                self.n_bits, self.maxcode, self.clear_flag = 9, (1 << 9) - 1, False
            raw = self.data[self.pos : self.pos + self.n_bits]
            self.pos += len(raw)
            if not raw:
                return -1
            self.chunk = int.from_bytes(raw, "little")
            self.offset = 0
            self.size = len(raw) * 8 - (self.n_bits - 1)
        code = (self.chunk >> self.offset) & ((1 << self.n_bits) - 1)
        self.offset += self.n_bits
        return code


def decompress(data: bytes) -> bytes:
    """Return the decompressed bytes of a complete ``.Z`` stream."""
    if len(data) < 3 or data[:2] != MAGIC:
        raise LZWError("not a compress (.Z) stream: bad magic number")
    flags = data[2]
    maxbits, block_mode = flags & 0x1F, bool(flags & 0x80)
    if not 9 <= maxbits <= 16:
        raise LZWError(f"unsupported maximum code width {maxbits}")
    reader = _CodeReader(data, maxbits)
    table: list[bytes] = [bytes([i]) for i in range(256)]
    if block_mode:
        table.append(b"")
    out: list[bytes] = []

    code = reader.read(len(table))
    if code == -1:
        return b""
    if code > 255:
        raise LZWError(f"first code {code} is not a literal")
    prev = table[code]
    out.append(prev)
    while (code := reader.read(len(table))) != -1:
        if code == CLEAR and block_mode:
            del table[256:]
            reader.clear_flag = True
            if (code := reader.read(len(table))) == -1:
                break
        if code < len(table):
            entry = table[code]
        elif code == len(table):
            entry = prev + prev[:1]
        else:
            raise LZWError(f"invalid code {code} at byte {reader.pos}")
        out.append(entry)
        if len(table) < reader.maxmaxcode:
            table.append(prev + entry[:1])
        prev = entry
    return b"".join(out)
