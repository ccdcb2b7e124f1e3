"""Display names of methods, environments and hyperparameters: the one registry every table, figure and legend reads.

A config label (an experiment's policy key, an environment's name) is shown as ``DISPLAY_NAMES[label]``;
``tests/report/test_names.py`` requires a name for every label each config uses.
"""

from __future__ import annotations

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
    "hare_alpha_meta": "HARE, alpha learned by meta-gradient",
    "hare_alpha_exp3": "HARE, alpha learned by EXP3 over the grid",
    "hare_synthesize": "HARE (synthesize)",
    "hare_alpha": "HARE, exploration weight",
    "hare_heads": "HARE, attention heads",
    "hare_clusters": "HARE, clusters",
    "hare_projections": "HARE, query projections",
    "hare_user_state": "HARE, user state",
    "hare_user_state_oracle": "HARE (oracle W), user state",
    "hare_schedule": "HARE, exploration schedule",
    "hare_covariance": "HARE, covariance update",
    "lnucb_ta_kappa": "LNUCB-TA, attention weight",
    "lnucb_ta_theta": "LNUCB-TA, neighbourhood range",
    "lnucb_ta_ablation": "LNUCB-TA, attention and adaptive kNN",
    "lnucb_ta_public": "LNUCB-TA (public code's reading)",
    "lnucb_ta_distance_weights": "LNUCB-TA, inverse-distance weights",
    "lnucb_ta_all_rewards": "LNUCB-TA, g from all rewards (not available to a bandit)",
    "lnucb_ta_floor_k": "LNUCB-TA, k rounded down",
    "lnucb_ta_uniform_theta": "LNUCB-TA, uniform initial theta",
    "shuttle_reference": "Shuttle (reference preparation)",
    "covertype_reference": "Covertype (reference preparation)",
    "open_bandit": "Open Bandit",
    "adult_reference": "Adult (reference preparation)",
    "adult_onehot": "Adult (one-hot preparation)",
    "magic_reference": "Magic (reference preparation)",
    "magic_onehot": "Magic (one-hot preparation)",
    "mushroom_reference": "Mushroom (reference preparation)",
    "mushroom_onehot": "Mushroom (one-hot preparation)",
    "mnist_reference": "MNIST (reference preparation)",
    "mnist_onehot": "MNIST (one-hot preparation)",
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
    "theta_min": r"$\theta_{\min}$",
    "theta_max": r"$\theta_{\max}$",
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


def parameter_label(name: str) -> str:
    """A hyperparameter's name on a figure axis: its symbol in mathtext where it has one, else the words of its name."""
    return PARAMETER_SYMBOLS.get(name, name.replace("_", " "))
