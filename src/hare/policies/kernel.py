"""Kernel bandit policies."""
