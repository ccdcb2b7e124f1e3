"""Neural bandit policies."""
