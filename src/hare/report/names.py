"""Display names of methods, environments and hyperparameters, shared by tables and figures."""

DISPLAY_NAMES = {
    "random": "Random",
    "linucb": "LinUCB",
    "hare": "HARE",
    "hare_oracle": "HARE (oracle W)",
    "hare_random": "HARE (random W)",
    "synthetic_linear": "HARE-Sim (linear)",
    "synthetic_nonlinear": "HARE-Sim (nonlinear)",
    "mushroom": "Mushroom",
    "adult": "Adult",
    "magic": "Magic",
    "shuttle": "Shuttle",
    "mnist": "MNIST",
    "covertype": "Covertype",
    "rag_cosine": "RAG-cosine",
    "lnucb_ta": "LNUCB-TA",
    "lin_ts": "LinTS",
    "lin_thompson_ucb": "LinThompsonUCB",
    "ucb1": "UCB1",
    "kl_ucb": "KL-UCB",
    "beta_thompson": "Beta-Thompson",
    "beta_thompson_enhanced": "Beta-Thompson (enhanced)",
    "eps_greedy": "Epsilon-greedy",
    "eps_greedy_enhanced": "Epsilon-greedy (enhanced)",
    "lin_thompson_enhanced": "LinThompson (enhanced)",
    "kernel_ucb": "KernelUCB",
    "kernel_ts": "KernelTS",
    "neural_ucb": "NeuralUCB",
    "neural_ts": "NeuralTS",
    "bootstrap_nn": "BootstrapNN",
    "knn_ucb": "kNN-UCB",
    "knn_kl_ucb": "kNN-KL-UCB",
    "lin_knn_ucb": "Lin-kNN-UCB",
    "hare_learned": "HARE (learned W)",
    "hare_frozen_mean": "HARE, frozen attention mean",
    "hare_online_mean": "HARE, online mean",
    "hare_online_projections": "HARE, online mean and projections",
    "hare_alpha_zero": "HARE, online mean and projections, alpha = 0",
    "open_bandit": "Open Bandit",
}

PARAMETER_SYMBOLS = {
    "alpha": r"$\alpha$",
    "alpha_0": r"$\alpha_0$",
    "nu": r"$\nu$",
    "v": r"$v$",
    "epsilon": r"$\epsilon$",
    "lam": r"$\lambda$",
    "c": r"$c$",
    "theta": r"$\theta$",
    "kappa": r"$\kappa$",
    "gamma": r"$\gamma$",
    "a0": r"$a_0$",
    "b0": r"$b_0$",
    "prior_alpha": r"$a_0$",
    "prior_beta": r"$b_0$",
    "inclusion_probability": r"$q$",
}
"""LaTeX symbols of the hyperparameters the tables name (others print as ``\\texttt{name}``)."""


def display_name(name: str) -> str:
    """The name a reader sees for a config label (labels with a grid point keep their point)."""
    base, _, point = name.partition("@")
    shown = DISPLAY_NAMES.get(base, base)
    return f"{shown} [{point}]" if point else shown


def parameter_symbol(name: str) -> str:
    """LaTeX for a hyperparameter's name in a table cell: its symbol, or the escaped name in typewriter type."""
    if name in PARAMETER_SYMBOLS:
        return PARAMETER_SYMBOLS[name]
    from hare.report.latex import escape

    return rf"\texttt{{{escape(name)}}}"
