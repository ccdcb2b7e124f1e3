"""Counter-based random numbers, batched over independent runs.

Every random number is a pure function of ``(run key, stream, counter, index)``
through the SplitMix64 finaliser (Steele, Lea & Flood 2014), evaluated with int64
tensor arithmetic. Consequences the library relies on:

* a batch of ``n_runs`` runs draws exactly the numbers each run would draw alone,
  so batched results equal one-by-one results bit for bit;
* the numbers are the same on every device (integer arithmetic is exact), and no
  Python loop over runs is needed;
* streams (environment, policy, initialisation) never interfere, whatever order
  the code consumes them in.
"""

from __future__ import annotations

import functools
import hashlib
import math

import torch

_MASK64 = (1 << 64) - 1


def _signed(value: int) -> int:
    """Two's-complement view of an unsigned 64-bit constant, as torch int64 stores it."""
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


_GOLDEN = _signed(0x9E3779B97F4A7C15)
_MIX1 = _signed(0xBF58476D1CE4E5B9)
_MIX2 = _signed(0x94D049BB133111EB)


def _shift_right(z: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 tensors (torch's ``>>`` is arithmetic)."""
    return (z >> bits) & ((1 << (64 - bits)) - 1)


def splitmix64(z: torch.Tensor) -> torch.Tensor:
    """SplitMix64 finaliser on int64 tensors (wrapping arithmetic), any shape."""
    z = z + _GOLDEN
    z = (z ^ _shift_right(z, 30)) * _MIX1
    z = (z ^ _shift_right(z, 27)) * _MIX2
    return z ^ _shift_right(z, 31)


@functools.lru_cache(maxsize=4096)
def _stream_key(stream: str) -> int:
    return _signed(key_from_names(stream))


_INDEX_HASHES: dict[tuple[int, torch.device], torch.Tensor] = {}


def _index_hash(numel: int, device: torch.device) -> torch.Tensor:
    """``splitmix64(arange(numel))`` ``(numel,)``, memoised per size and device (a pure function)."""
    key = (numel, device)
    hashed = _INDEX_HASHES.get(key)
    if hashed is None:
        hashed = splitmix64(torch.arange(numel, dtype=torch.int64, device=device))
        if numel <= 1 << 16 and len(_INDEX_HASHES) < 256:
            _INDEX_HASHES[key] = hashed
    return hashed


def key_from_names(*names: object) -> int:
    """A 63-bit key from any printable names (experiment, environment, policy...)."""
    digest = hashlib.sha256("\x1f".join(map(str, names)).encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def run_keys(base_seed: int, run_indices: torch.Tensor | list[int], *names: object) -> torch.Tensor:
    """Keys of independent runs: ``(n_runs,)`` int64 from ``(base_seed, names, run index)``.

    The key of run ``i`` does not depend on which other runs share the batch.
    """
    base = key_from_names(base_seed, *names)
    idx = torch.as_tensor(run_indices, dtype=torch.int64)
    return splitmix64(splitmix64(torch.full_like(idx, _signed(base))) ^ idx)


class CounterRNG:
    """Random numbers for ``n_runs`` runs at once, indexed by ``(stream, counter)``.

    ``keys``: ``(n_runs,)`` int64 run keys (see :func:`run_keys`). Draws have
    shape ``(n_runs, *shape)``; draw ``[b, ...]`` depends only on ``keys[b]``.
    """

    HEAD_BLOCK = 256
    """Counters whose per-run heads one evaluation computes and keeps (see :meth:`heads`)."""

    def __init__(self, keys: torch.Tensor):
        if keys.dtype != torch.int64 or keys.dim() != 1:
            raise ValueError(f"keys must be a 1-d int64 tensor, got {keys.dtype} of shape {tuple(keys.shape)}")
        self.keys = keys
        self._head_blocks: dict[int, tuple[int, torch.Tensor]] = {}

    @property
    def device(self) -> torch.device:
        return self.keys.device

    def to(self, device: torch.device | str) -> CounterRNG:
        return CounterRNG(self.keys.to(device))

    def bits(self, stream: int | str, counter: int, shape: tuple[int, ...]) -> torch.Tensor:
        """Raw 64-bit draws ``(n_runs, *shape)`` int64."""
        stream_key = _stream_key(stream) if isinstance(stream, str) else int(stream)
        head = self.heads(stream_key, int(counter))  # (n_runs,)
        out = splitmix64(head[:, None] + _index_hash(math.prod(shape), self.device)[None, :])  # (n_runs, numel)
        return out.reshape(len(self.keys), *shape)

    def heads(self, stream_key: int, counter: int) -> torch.Tensor:
        """``splitmix64(splitmix64(keys ^ stream_key) + counter)`` ``(n_runs,)`` int64: the per-run seed of
        one draw.

        Computed for the whole block of :attr:`HEAD_BLOCK` consecutive counters that holds ``counter``
        and kept (the last block per stream), so a stream drawn once per round costs one small
        indexing per round instead of two hashes.
        """
        block, offset = divmod(counter, self.HEAD_BLOCK)
        cached = self._head_blocks.get(stream_key)
        if cached is None or cached[0] != block:
            counters = torch.arange(
                block * self.HEAD_BLOCK, (block + 1) * self.HEAD_BLOCK, dtype=torch.int64, device=self.device
            )
            cached = (
                block,
                splitmix64(splitmix64(self.keys ^ stream_key)[:, None] + counters[None, :]),
            )  # (n_runs, HEAD_BLOCK)
            self._head_blocks[stream_key] = cached
        return cached[1][:, offset]

    def bits_counters(self, stream: int | str, first: int, count: int, shape: tuple[int, ...]) -> torch.Tensor:
        """The draws of :meth:`bits` at the ``count`` consecutive counters ``first, first + 1, ...`` in one
        evaluation: ``(n_runs, count, *shape)`` int64, entry ``[:, i]`` equal to ``bits(stream, first + i, shape)``."""
        stream_key = _stream_key(stream) if isinstance(stream, str) else int(stream)
        counters = torch.arange(first, first + count, dtype=torch.int64, device=self.device)
        heads = splitmix64(splitmix64(self.keys ^ stream_key)[:, None] + counters[None, :])  # (n_runs, count)
        numel = math.prod(shape)
        out = splitmix64(heads[:, :, None] + _index_hash(numel, self.device)[None, None, :])  # (n_runs, count, numel)
        return out.reshape(len(self.keys), count, *shape)

    def randint_counters(
        self, stream: int | str, first: int, count: int, high: int, shape: tuple[int, ...] = ()
    ) -> torch.Tensor:
        """:meth:`randint` at ``count`` consecutive counters from ``first`` at once, ``(n_runs, count, *shape)``:
        entry ``[:, i]`` equals ``randint(stream, first + i, high, shape)`` bit for bit (a training's minibatches drawn
        in one evaluation instead of one per step)."""
        mantissa = _shift_right(self.bits_counters(stream, first, count, shape), 11)
        uniform = (mantissa.to(torch.float64) + 0.5) * 2.0**-53
        return torch.clamp((uniform * high).long(), max=high - 1)

    def uniform(
        self, stream: int | str, counter: int, shape: tuple[int, ...] = (), dtype=torch.float64
    ) -> torch.Tensor:
        """Uniform draws on the open interval (0, 1), ``(n_runs, *shape)``, 53-bit resolution."""
        mantissa = _shift_right(self.bits(stream, counter, shape), 11)
        return ((mantissa.to(torch.float64) + 0.5) * 2.0**-53).to(dtype)

    def normal(self, stream: int | str, counter: int, shape: tuple[int, ...] = (), dtype=torch.float64) -> torch.Tensor:
        """Standard normal draws by the Box–Muller transform, ``(n_runs, *shape)``."""
        u = self.uniform(stream, counter, (2, *shape))
        radius = torch.sqrt(-2.0 * torch.log(u[:, 0]))
        return (radius * torch.cos(2.0 * math.pi * u[:, 1])).to(dtype)

    def randint(self, stream: int | str, counter: int, high: int, shape: tuple[int, ...] = ()) -> torch.Tensor:
        """Integers uniform on ``{0, ..., high-1}``, ``(n_runs, *shape)`` int64."""
        return torch.clamp((self.uniform(stream, counter, shape) * high).long(), max=high - 1)

    def permutation(self, stream: int | str, n: int) -> torch.Tensor:
        """An independent uniform permutation of ``range(n)`` per run: ``(n_runs, n)`` int64."""
        return torch.argsort(self.uniform(stream, 0, (n,)), dim=1)
