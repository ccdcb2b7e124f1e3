import pytest
import torch

from hare.random import CounterRNG, run_keys, splitmix64


def test_splitmix64_matches_reference_values():
    """First outputs of SplitMix64 seeded with 0 (Vigna's reference implementation)."""
    state = 0
    expected = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    for value in expected:
        out = splitmix64(torch.tensor([state - (1 << 64) if state >= 1 << 63 else state]))
        assert int(out) & ((1 << 64) - 1) == value
        state = (state + 0x9E3779B97F4A7C15) & ((1 << 64) - 1)


def test_run_key_does_not_depend_on_the_batch():
    batch = run_keys(3, range(5), "exp")
    assert torch.equal(batch[2:3], run_keys(3, [2], "exp"))
    assert len(set(batch.tolist())) == 5
    assert not torch.equal(run_keys(3, range(5), "exp"), run_keys(3, range(5), "other"))


def test_draws_of_a_run_are_independent_of_other_runs():
    keys = run_keys(0, range(4))
    together = CounterRNG(keys).normal("s", 11, (3, 2))
    alone = CounterRNG(keys[1:2]).normal("s", 11, (3, 2))
    assert torch.equal(together[1:2], alone)


def test_uniform_and_normal_moments():
    rng = CounterRNG(run_keys(1, range(4)))
    u = rng.uniform("u", 0, (50_000,))
    assert 0 < float(u.min()) and float(u.max()) < 1
    assert abs(float(u.mean()) - 0.5) < 0.01
    z = rng.normal("z", 0, (50_000,))
    assert abs(float(z.mean())) < 0.02 and abs(float(z.var()) - 1) < 0.03
    assert abs(float((z.abs() < 1.959964).double().mean()) - 0.95) < 0.005


def test_streams_and_counters_differ():
    rng = CounterRNG(run_keys(1, range(2)))
    a = rng.uniform("a", 0, (8,))
    assert not torch.equal(a, rng.uniform("b", 0, (8,)))
    assert not torch.equal(a, rng.uniform("a", 1, (8,)))
    assert torch.equal(a, rng.uniform("a", 0, (8,)))


def test_randint_and_permutation():
    rng = CounterRNG(run_keys(2, range(3)))
    draws = rng.randint("k", 0, 7, (20_000,))
    counts = torch.bincount(draws.flatten(), minlength=7).double()
    assert int(draws.min()) == 0 and int(draws.max()) == 6
    assert float((counts / counts.sum() - 1 / 7).abs().max()) < 0.01
    perm = rng.permutation("p", 100)
    assert torch.equal(perm.sort(dim=1).values, torch.arange(100).expand(3, 100))


def test_keys_must_be_int64_vector():
    with pytest.raises(ValueError, match="1-d int64"):
        CounterRNG(torch.zeros(3))


def test_cached_counter_heads_equal_the_direct_hash_in_any_counter_order():
    """Draws through the block cache of counter heads equal ``splitmix64(splitmix64(key ^ stream) + counter)``
    followed by the index hash, evaluated directly, for counters visited across and back over blocks."""
    keys = run_keys(5, range(3))
    rng = CounterRNG(keys)
    stream = 0x1234
    for counter in (0, 1, 255, 256, 7, 100_000, -3, 511, 0):
        head = splitmix64(splitmix64(keys ^ stream) + counter)
        expected = splitmix64(head[:, None] + splitmix64(torch.arange(4, dtype=torch.int64))[None, :])
        assert torch.equal(rng.bits(stream, counter, (4,)), expected), counter


@pytest.mark.parametrize("first, count", [(0, 1), (5, 100), (250, 20), (511, 300)])
def test_draws_at_consecutive_counters_equal_one_draw_per_counter(first, count):
    """``randint_counters`` draws ``count`` counters at once (blocks of heads crossed included): bit for bit the
    per-counter draws."""
    rng = CounterRNG(run_keys(3, [0, 1, 2], "counters"))
    together = rng.randint_counters("minibatch", first, count, 37, (4, 5))
    assert together.shape == (3, count, 4, 5)
    one_by_one = torch.stack([rng.randint("minibatch", first + i, 37, (4, 5)) for i in range(count)], dim=1)
    assert torch.equal(together, one_by_one)
