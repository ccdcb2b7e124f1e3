"""The allocator setting: a freed tensor's memory stays on the heap for the next round instead of going back
to the kernel (and being faulted in anew), read from glibc's own accounting (``mallinfo2``)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from hare.allocator import MMAP_THRESHOLD_BYTES, keep_freed_memory

BLOCK_BYTES = 16_000_000
"""Below :data:`MMAP_THRESHOLD_BYTES` and far above glibc's default threshold (128 KiB, raised dynamically)."""

PROBE = (
    "\n"
    "import ctypes, sys, torch\n"
    "from hare.allocator import keep_freed_memory\n"
    "class MallInfo2(ctypes.Structure):\n"
    '    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", '
    '"fsmblks", "uordblks", "fordblks", "keepcost")]\n'
    "libc = ctypes.CDLL(None)\n"
    "libc.mallinfo2.restype = MallInfo2\n"
    'applied = keep_freed_memory() if sys.argv[1] == "keep" else None\n'
    "before = libc.mallinfo2()\n"
    f"block = torch.empty({BLOCK_BYTES // 8}, dtype=torch.float64)\n"
    "held = libc.mallinfo2()\n"
    "del block\n"
    "freed = libc.mallinfo2()\n"
    "print(held.hblkhd - before.hblkhd, held.arena - before.arena, freed.arena - held.arena, "
    "freed.fordblks - held.fordblks, applied)\n"
)


def glibc_accounting(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], check=True, capture_output=True, text=True).stdout.split()
    mapped, heap_growth, heap_change_on_free, free_growth = map(int, out[:4])
    return {
        "mapped": mapped,
        "heap_growth": heap_growth,
        "heap_change_on_free": heap_change_on_free,
        "free_growth": free_growth,
        "applied": out[4],
    }


def has_mallinfo2() -> bool:
    try:
        return hasattr(ctypes.CDLL(None), "mallinfo2")
    except OSError:
        return False


@pytest.mark.skipif(
    not (sys.platform.startswith("linux") and has_mallinfo2()), reason="glibc >= 2.33 (mallopt, mallinfo2)"
)
def test_a_freed_block_stays_on_the_heap_for_reuse():
    assert BLOCK_BYTES < MMAP_THRESHOLD_BYTES
    default = glibc_accounting("default")
    assert default["mapped"] >= BLOCK_BYTES, f"glibc's defaults no longer map such a block on its own: {default}"
    kept = glibc_accounting("keep")
    assert kept["applied"] == "True"
    assert kept["mapped"] < BLOCK_BYTES and kept["heap_growth"] > BLOCK_BYTES // 2, (
        f"the block was not placed on the heap: {kept}"
    )
    assert kept["heap_change_on_free"] == 0 and kept["free_growth"] >= BLOCK_BYTES, (
        f"the freed block left the heap: {kept}"
    )


def test_setting_it_twice_is_harmless():
    first = keep_freed_memory()
    assert keep_freed_memory() == first
