"""Bandit policies, one module per algorithm family; importing this package registers them all."""

from hare.policies import classic, hare, kernel, linear, neighbors, neural  # noqa: F401
from hare.policies.base import Policy, PolicyConfig, build_policy, make_config, policy_class, policy_names

__all__ = ["Policy", "PolicyConfig", "build_policy", "make_config", "policy_class", "policy_names"]
