"""Shared fixtures: the repository root and small configs."""

from pathlib import Path

import pytest
import torch
import yaml

REPOSITORY = Path(__file__).resolve().parents[1]

# Test workers share a few cores; one intra-op thread each keeps them from oversubscribing.
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def repository() -> Path:
    return REPOSITORY


@pytest.fixture
def smoke_config() -> dict:
    return yaml.safe_load((REPOSITORY / "config" / "smoke.yaml").read_text())
