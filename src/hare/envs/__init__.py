"""Bandit environments: each returns typed rounds with the full table of mean rewards; importing this package
registers every kind (:mod:`hare.envs.registry`)."""

from hare.envs import classification, replay, synthetic, text  # noqa: F401
from hare.envs.base import BanditEnvironment, BanditRound, EnvironmentShape, ItemPool, Observation
from hare.envs.registry import environment_class, environment_kinds, environment_shape

__all__ = [
    "BanditEnvironment",
    "BanditRound",
    "EnvironmentShape",
    "ItemPool",
    "Observation",
    "environment_class",
    "environment_kinds",
    "environment_shape",
]
