"""Theory: sympy-derived bounds, the measured regret decomposition, the claims register."""
