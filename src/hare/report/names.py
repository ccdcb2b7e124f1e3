"""Display names of methods, environments and hyperparameters: the one registry every table, figure and legend reads.

A config label (an experiment's policy key, an environment's name) is shown as ``DISPLAY_NAMES[label]``;
``tests/report/test_names.py`` requires a name for every label each config uses. An environment named after its
dataset, alone or with a preparation (``adult``, ``adult_onehot``), shows the dataset record's ``display_name``
(``hare.data.registry``, the one place a dataset is described; the only module above the base this layer reads, for
its records' names), with the preparation's name (:data:`PREPARATION_NAMES`).
"""

from __future__ import annotations

import re

from hare.data.registry import DATASETS
from hare.report.latex import escape

DISPLAY_NAMES = {
    "random": "Random",
    "linucb": "LinUCB",
    "hare": "HARE",
    "hare_oracle": "HARE (oracle W)",
    "hare_random": "HARE (random W)",
    "synthetic_linear": "HARE-Sim (linear)",
    "synthetic_nonlinear": "HARE-Sim (nonlinear)",
    "synthetic_between": "HARE-Sim (between)",
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
    "hare_credit_dominant": "HARE (synthesize), dominant-cluster credit",
    "hare_credit_attention_weighted": "HARE (synthesize), attention-weighted credit",
    "hare_credit_nearest_item": "HARE (synthesize), nearest-item credit",
    "hare_credit_gradient": "HARE (synthesize), gradient credit",
    "hare_credit_none": "HARE (synthesize), no credit",
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
}
"""The names of the registered policies, of the experiments' other policy labels and of HARE-Sim's environments; the
environments named after a dataset are added below."""

PREPARATION_NAMES = {
    "reference": "reference",
    "onehot": "one-hot",
    "standardised": "standardised",
    "minmax": "min-max",
    "onehot_standardised": "one-hot, standardised",
    "onehot_minmax": "one-hot, min-max",
    "project": "project",
}
"""A preparation's name in the tables and the text, in table order (the reference first, the project's last): one
per preparation of ``hare.data.encoding.PROTOCOLS`` (``tests/report/test_preparation_names.py``)."""

DISPLAY_NAMES.update({name: spec.display_name for name, spec in DATASETS.items()})
DISPLAY_NAMES.update(
    {
        f"{name}_{preparation}": f"{spec.display_name} ({shown} preparation)"
        for name, spec in DATASETS.items()
        if spec.kind == "classification"
        for preparation, shown in PREPARATION_NAMES.items()
    }
)
"""An environment named after its dataset shows the dataset record's name; one named ``<dataset>_<preparation>``
(the configs' convention for a classification dataset under a preparation) shows it with the preparation's name:
``adult_onehot`` -> "Adult (one-hot preparation)"."""

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
    "n_heads": r"$H$",
    "n_clusters": r"$C$",
    "key_dim": r"$d_k$",
    "alpha_lr": r"$\eta$",
    "exp3_gamma": r"$\gamma_{\mathrm{EXP3}}$",
    "k": r"$k$",
}
"""LaTeX symbols of the hyperparameters the tables name, as the paper writes them (others print as their words,
:data:`PARAMETER_WORDS`, or as ``\\texttt{name}``)."""

PARAMETER_VALUES = {
    "projections": {
        "random": "random projections",
        "learned": "learned projections",
        "oracle": r"oracle projections $W^\ast$",
    },
    "mean": {"online": "online mean", "frozen": "frozen attention mean"},
    "user_state": {"posterior": "user posterior", "off": "no user state", "oracle": r"true user state $u^\ast$"},
    "alpha_schedule": {
        "fixed": r"fixed $\alpha$",
        "inverse_sqrt": r"$\alpha_0/\sqrt{t}$",
        "lnucb_ta": r"temporal-attention $\alpha$",
        "meta_gradient": r"$\alpha$ by meta-gradient",
        "exp3": r"$\alpha$ by EXP3",
        "per_head": r"per-head $\alpha_h$",
    },
    "covariance_update": {"dominant": "chosen-cluster update", "attention_weighted": "attention-weighted update"},
    "pool": {"log_prototypes": "log prototypes", "environment": "environment's pool"},
    "knn_weights": {"distance": "inverse-distance weights", "uniform": "uniform neighbour weights"},
    "global_mean": {
        "all_rewards": r"$g$ from all rewards",
        "rounds": r"$g$ over the rounds played",
        "arms": r"$g$ over the arms",
    },
    "k_rounding": {"floor": r"$k$ rounded down", "round": r"$k$ rounded"},
    "theta_init": {"uniform": r"uniform initial $\theta$", "zero": r"zero initial $\theta$"},
    "attention": {True: "temporal attention", False: "no temporal attention"},
    "adaptive_knn": {True: "adaptive kNN", False: "no adaptive kNN"},
    "exploration": {"diagonal": "diagonal bonus", "jacobian": "Jacobian bonus", "loop": "per-arm bonus"},
    "encoding": {"disjoint": "disjoint encoding", "arm": "arm encoding"},
}
"""What a categorical hyperparameter's value reads as in a table (``projections: learned`` -> "learned
projections"): the value names the variant, so the cell shows the variant's name and not ``name=value``."""

PARAMETER_WORDS = {
    "online_lr": "projection step",
    "fit_steps": "fitting steps",
    "max_neighbors": "neighbours at most",
    "max_points": "points at most",
    "width": "width",
    "train_steps": "training steps",
    "train_every": "training every",
    "n_networks": "networks",
    "lr": "learning rate",
    "alpha_grid": r"grid of $\alpha$",
}
"""Words for the hyperparameters the paper gives no symbol (``online_lr=0.05`` -> "projection step 0.05")."""


def display_name(name: str) -> str:
    """The name a reader sees for a config label (labels with a grid point keep their point)."""
    base, _, point = name.partition("@")
    shown = DISPLAY_NAMES.get(base, base)
    return f"{shown} [{point}]" if point else shown


def parameter_symbol(name: str) -> str:
    """LaTeX for a hyperparameter's name in a table cell: its symbol, or the escaped name in typewriter type."""
    if name in PARAMETER_SYMBOLS:
        return PARAMETER_SYMBOLS[name]
    return rf"\texttt{{{escape(name)}}}"


def parameter_value(value) -> str:
    """A hyperparameter value for a table cell: numbers in their shortest form (0.01, 1e-05, 10), lists joined by
    commas, booleans in lower case, text LaTeX-escaped."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return ", ".join(parameter_value(item) for item in value)
    return escape(str(value))


def parameter_text(name: str, value) -> str:
    """LaTeX for one hyperparameter setting in a table cell, as the paper writes it: a categorical value by its
    variant's name (:data:`PARAMETER_VALUES`, ``projections=learned`` -> "learned projections"), a number after its
    symbol (``alpha=0.1`` -> ``$\\alpha$=0.1``) or after its words (``online_lr=0.05`` -> "projection step 0.05"),
    and only a name the registry lacks as ``\\texttt{name}=value``."""
    phrases = PARAMETER_VALUES.get(name, {})
    key = value if isinstance(value, bool | str) else None
    if key is not None and key in phrases:
        return phrases[key]
    if name in PARAMETER_WORDS and name not in PARAMETER_SYMBOLS:
        shown = parameter_value(value)
        return f"{PARAMETER_WORDS[name]} {'(' + shown + ')' if isinstance(value, list | tuple) else shown}"
    return f"{parameter_symbol(name)}={parameter_value(value)}"


def parameters_text(params: dict) -> str:
    """Every setting of ``params`` (a row's hyperparameters, in their order) by :func:`parameter_text`, comma
    separated; ``--`` for none."""
    return ", ".join(parameter_text(name, value) for name, value in params.items()) or "--"


SYMBOL_WORDS = {
    "alpha_0": r"$\alpha_0$",
    "alpha": r"$\alpha$",
    "theta_min": r"$\theta_{\min}$",
    "theta_max": r"$\theta_{\max}$",
    "kappa": r"$\kappa$",
    "lambda": r"$\lambda$",
}
"""Hyperparameter names a caption or a note may spell out in words (``alpha_0 = 1``, ``the attention weight kappa``),
typeset as the paper's symbols by :func:`with_symbols`."""
_SYMBOL_WORD = re.compile(
    r"(?<![A-Za-z0-9_\\])("
    + "|".join(map(re.escape, sorted(SYMBOL_WORDS, key=len, reverse=True)))
    + r")(?![A-Za-z0-9_])"
)


def with_symbols(text: str) -> str:
    """``text`` LaTeX-escaped, with every whole word of :data:`SYMBOL_WORDS` (``alpha``, ``alpha_0``, ``kappa``,
    ``theta_min``, ...) replaced by its symbol: a caption written in the config reads as the paper."""
    parts = _SYMBOL_WORD.split(str(text))
    return "".join(SYMBOL_WORDS[part] if i % 2 else escape(part) for i, part in enumerate(parts))


def parameter_label(name: str) -> str:
    """A hyperparameter's name on a figure axis: its symbol in mathtext where it has one, else the words of its name."""
    return PARAMETER_SYMBOLS.get(name, name.replace("_", " "))
