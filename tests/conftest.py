"""Shared fixtures: the repository root and small configs."""

from pathlib import Path

import pytest
import yaml

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repository() -> Path:
    return REPOSITORY


@pytest.fixture
def smoke_config() -> dict:
    return yaml.safe_load((REPOSITORY / "config" / "smoke.yaml").read_text())
