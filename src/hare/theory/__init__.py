"""Regret bounds for HARE and its baselines, derived symbolically with every constant kept."""
