"""Fixtures of the model tests: a small random multi-head problem."""

import pytest
import torch


@pytest.fixture
def attention_problem():
    """Keys, values, output, clusters and queries of a 3-head, 12-item, 4-cluster pool over 2 runs."""
    gen = torch.Generator().manual_seed(0)
    n_heads, n_items, key_dim, value_dim, out_dim, n_runs = 3, 12, 5, 4, 6, 2
    return {
        "keys": torch.randn(n_heads, n_items, key_dim, generator=gen, dtype=torch.float64),
        "values": torch.randn(n_heads, n_items, value_dim, generator=gen, dtype=torch.float64),
        "output": torch.randn(n_heads * value_dim, out_dim, generator=gen, dtype=torch.float64),
        "clusters": torch.arange(n_items) % 4,
        "queries": torch.randn(n_runs, 7, n_heads, key_dim, generator=gen, dtype=torch.float64),
        "n_runs": n_runs,
    }
