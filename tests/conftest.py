"""Shared fixtures: the repository root and small configs."""

from pathlib import Path

import pytest
import torch

REPOSITORY = Path(__file__).resolve().parents[1]

# Test workers share a few cores; one intra-op thread each keeps them from oversubscribing.
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def repository() -> Path:
    return REPOSITORY


@pytest.fixture
def smoke_config() -> dict:
    """config/smoke.yaml resolved onto its base, default.yaml (the file itself is an overlay)."""
    from hare.experiments.config import resolve_config_file

    return resolve_config_file(REPOSITORY / "config" / "smoke.yaml")
