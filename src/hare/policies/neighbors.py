"""Neighbors bandit policies."""
