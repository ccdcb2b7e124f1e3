"""HARE: Hybrid Attention-Reinforced Exploration, and the batched bandit library behind its paper."""

__version__ = "0.1.0"
