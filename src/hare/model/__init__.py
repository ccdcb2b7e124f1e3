"""Building blocks shared by policies."""
