"""Display names of methods and environments, shared by tables and figures."""

DISPLAY_NAMES = {
    "random": "Random",
    "linucb": "LinUCB",
    "hare": "HARE",
    "hare_oracle": "HARE (oracle W)",
    "hare_random": "HARE (random W)",
    "synthetic_linear": "HARE-Sim (linear)",
    "mushroom": "Mushroom",
    "rag_cosine": "RAG-cosine",
    "lnucb_ta": "LNUCB-TA",
    "lin_ts": "LinTS",
    "ucb1": "UCB1",
    "eps_greedy": "Epsilon-greedy",
    "eps_greedy_enhanced": "Epsilon-greedy (enhanced)",
    "neural_ucb": "NeuralUCB",
    "knn_ucb": "kNN-UCB",
    "lin_knn_ucb": "Lin-kNN-UCB",
    "hare_learned": "HARE (learned W)",
    "open_bandit": "Open Bandit",
}


def display_name(name: str) -> str:
    """The name a reader sees for a config label (labels with a grid point keep their point)."""
    base, _, point = name.partition("@")
    shown = DISPLAY_NAMES.get(base, base)
    return f"{shown} [{point}]" if point else shown
