"""Bandit policies, one module per algorithm family; importing this package registers them all."""

from hare.policies import (  # noqa: F401
    classic,
    hare,
    kernel,
    knn_ucb,
    linear,
    lnucb_ta,
    lnucb_ta_enhanced,
    neural,
    neural_posterior,
    rag_cosine,
)
from hare.policies.base import Policy, PolicyConfig, build_policy, make_config, policy_class, policy_names

__all__ = ["Policy", "PolicyConfig", "build_policy", "make_config", "policy_class", "policy_names"]
