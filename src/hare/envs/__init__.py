"""Bandit environments: each returns typed rounds with the full table of mean rewards."""

from hare.envs.base import BanditEnvironment, BanditRound, ItemPool, Observation

__all__ = ["BanditEnvironment", "BanditRound", "ItemPool", "Observation"]
