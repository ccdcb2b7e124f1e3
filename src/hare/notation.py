"""The paper's notation: each symbol, its meaning, its config field, its code identifier and its result-file key.

:data:`GLOSSARY` is the one table that ties the symbols of ``paper/sections/*.tex`` to the code. It is rendered into
the paper's notation appendix (:func:`hare.report.notation.notation_table`, ``hare notation``) and checked by
``tests/test_notation.py``: every config key path exists in ``config/schema.yaml`` and is set by the resolved default
config, every code identifier resolves, every symbol is unique. A base-layer module: plain data, no import of
``hare``.

Formats of a :class:`GlossaryEntry`'s fields:

* ``symbol``: the symbol as the paper writes it, LaTeX math source without the dollar signs (a word subscript as
  ``\\text{...}``);
* ``config``: key paths into the config, dot-separated, ``*`` standing for any name of a mapping whose keys the
  config chooses (``experiments.*.horizon``: every experiment's horizon); a policy's hyperparameter as its
  ``params`` path (``experiments.*.policies.*.params.alpha``), which a ``grid`` of the same name also sets; empty
  where the symbol is not configured;
* ``code``: ``module:qualified.name`` strings (``hare.policies.hare:HAREConfig.key_dim``; a dataclass field or an
  annotated attribute counts as an attribute), a mapping's entry as ``name[key]``
  (``hare.theory.bounds:SYMBOLS[K]``); at least one;
* ``results``: ``file: key path`` strings naming where the quantity reaches a result file (``<experiment>``,
  ``<environment>`` and ``<label>`` stand for a run's names); empty where it reaches none under its own key.

Length: one module because the glossary is one table, one entry per symbol of the paper, and the paper's notation
appendix and ``tests/test_notation.py`` read it whole; split by section, a symbol could be defined twice.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GLOSSARY", "GlossaryEntry", "RUN_SIDECAR", "RUN_ARRAYS"]

RUN_SIDECAR = "results/runs/<experiment>/<environment>/<label>.json"
"""Every job's sidecar (its configuration, sizes, versions and summary)."""
RUN_ARRAYS = "results/runs/<experiment>/<environment>/<label>.npz"
"""Every job's arrays (regret and reward curves, one row per run)."""
TERMS = "results/checks/regret_terms"
"""The regret decomposition's result files, ``.json`` and ``.npz`` (paper, sec:decomposition)."""


@dataclass(frozen=True)
class GlossaryEntry:
    """One symbol of the paper: ``symbol`` (LaTeX math), ``meaning`` (a few words), ``config`` (key paths, ``()``
    where not configured), ``code`` (``module:qualified.name`` identifiers) and ``results`` (``file: key``)."""

    symbol: str
    meaning: str
    config: tuple[str, ...]
    code: tuple[str, ...]
    results: tuple[str, ...] = ()


def _entry(symbol: str, meaning: str, config=(), code=(), results=()) -> GlossaryEntry:
    return GlossaryEntry(symbol, meaning, tuple(config), tuple(code), tuple(results))


GLOSSARY: tuple[GlossaryEntry, ...] = (
    # Sizes of a bandit problem and of a build.
    _entry(
        "d",
        "context dimension of a linear bandit",
        code=("hare.envs.base:BanditEnvironment.dim", "hare.theory.bounds:d"),
        results=("results/checks/oful.json: constants.d",),
    ),
    _entry(
        "K",
        "number of arms",
        code=("hare.envs.base:BanditEnvironment.n_arms", "hare.theory.bounds:SYMBOLS[K]"),
    ),
    _entry(
        "T",
        "horizon (rounds)",
        config=("experiments.*.horizon", "theory.decomposition.horizons"),
        code=("hare.envs.base:BanditEnvironment.horizon", "hare.theory.bounds:T"),
        results=(f"{RUN_SIDECAR}: horizon", f"{TERMS}.npz: horizons"),
    ),
    _entry(
        "B",
        "runs played at once (one batch)",
        config=("experiments.*.n_runs", "bench.batch_sizes"),
        code=("hare.envs.base:BanditEnvironment.n_runs",),
        results=(f"{RUN_SIDECAR}: n_runs",),
    ),
    _entry(
        "M",
        "logged interactions of the warm start",
        config=("experiments.*.n_logged", "theory.decomposition.n_logged", "theory.approx_budget.budgets"),
        code=("hare.envs.base:LoggedRounds", "hare.theory.bounds:M"),
        results=(f"{RUN_SIDECAR}: n_logged", "results/checks/approx_budget.json: budgets"),
    ),
    # HARE's objects (paper, sec:method).
    _entry(
        "X",
        "knowledge pool, rows e_n of unit norm",
        code=("hare.envs.base:ItemPool.embeddings",),
    ),
    _entry(
        "N",
        "pool size (items)",
        config=("environments.*.params.n_items", "pool_scaling.pool_sizes"),
        code=("hare.theory.bounds:SYMBOLS[N]",),
        results=(f"{TERMS}.json: constants.n_items", "results/checks/pool_scaling.json: cells.n_items"),
    ),
    _entry(
        "c(n)",
        "cluster of item n",
        code=("hare.envs.base:ItemPool.clusters", "hare.policies.hare_projections:pool_clusters"),
    ),
    _entry(
        "C",
        "number of clusters (in the pool-scaling study: a fixed number, ceil(sqrt N) or ceil(N / 100))",
        config=("environments.*.params.n_clusters", "theory.decomposition_grid.n_clusters"),
        code=("hare.policies.hare:HAREConfig.n_clusters", "hare.theory.bounds:C"),
        results=(f"{TERMS}.json: constants.n_clusters", "results/checks/pool_scaling.json: cells.n_clusters"),
    ),
    _entry(
        "H",
        "number of attention heads",
        config=("theory.heads_alpha.heads",),
        code=(
            "hare.policies.hare:HAREConfig.n_heads",
            "hare.model.projections:Projections.n_heads",
            "hare.theory.bounds:H",
        ),
        results=("results/checks/heads_alpha.json: heads",),
    ),
    _entry(
        "d_k",
        "key dimension (per head)",
        config=("theory.decomposition_grid.key_dims",),
        code=(
            "hare.policies.hare:HAREConfig.key_dim",
            "hare.model.projections:Projections.key_dim",
            "hare.theory.bounds:d_k",
        ),
        results=(f"{TERMS}.json: constants.key_dim", "results/checks/heads_alpha.json: key_dim"),
    ),
    _entry(
        "d_u",
        "user-state dimension",
        code=("hare.envs.base:BanditEnvironment.user_dim", "hare.theory.bounds:d_u"),
        results=(f"{TERMS}.json: constants.user_dim",),
    ),
    _entry(
        "x_t",
        "query (context) of round t",
        code=("hare.envs.base:Observation.queries", "hare.envs.base:Observation.contexts"),
    ),
    _entry(
        "W^h_{Q_x}, W^h_{Q_u}, W^h_K, W^h_V",
        "query, user, key and value projections of head h",
        code=("hare.model.projections:Projections", "hare.policies.hare:HAREConfig.projections"),
    ),
    _entry(
        "q_h",
        "user-conditioned query of head h",
        code=("hare.model.attention:AttentionOutput.queries", "hare.policies.hare:HARE.queries"),
    ),
    _entry(
        "s_{h,n}",
        "attention score of item n in head h",
        code=("hare.model.attention:AttentionOutput.scores",),
    ),
    _entry(
        "\\Sigma_{h,j}",
        "covariance of cluster j in head h (ridge + routed queries)",
        code=("hare.model.covariance:RidgeState", "hare.model.attention:UncertaintyAttention.update"),
    ),
    _entry(
        "r",
        "rank of the low-rank-plus-diagonal approximation of Sigma_{h,j} (frequent-directions sketch)",
        code=("hare.policies.hare:HAREConfig.covariance_rank", "hare.model.covariance_approx:LowRankRidgeState"),
    ),
    _entry(
        "U_{h,j}",
        "exploration bonus of cluster j of head h: the query's norm in the inverse covariance",
        code=("hare.model.attention:AttentionOutput.bonuses", "hare.model.attention:UncertaintyAttention.bonuses"),
    ),
    _entry(
        "\\alpha",
        "exploration (bonus) weight",
        config=("experiments.*.policies.*.params.alpha", "theory.heads_alpha.alphas"),
        code=(
            "hare.policies.hare:HAREConfig.alpha",
            "hare.policies.linear:LinUCBConfig.alpha",
            "hare.theory.bounds:alpha",
        ),
        results=(f"{RUN_SIDECAR}: tunable.alpha", "results/checks/heads_alpha.json: alphas"),
    ),
    _entry(
        "\\alpha_h",
        "exploration weight of head h (its schedule, or learned online)",
        code=(
            "hare.policies.hare:HAREConfig.alphas",
            "hare.policies.hare:HAREConfig.alpha_schedule",
            "hare.policies.hare:HARE.exploration_weights",
            "hare.policies.hare:HARE.learn_alpha",
        ),
        results=(f"{RUN_ARRAYS}: alpha_trajectory",),
    ),
    _entry(
        "J_t(\\alpha)",
        "surrogate whose meta-gradient step learns alpha_h: the critic's value under the attention",
        code=("hare.policies.alpha_learning:surrogate",),
    ),
    _entry(
        "\\eta",
        "meta-gradient step on log alpha_h, in units of its running RMS",
        config=("experiments.*.policies.*.params.alpha_lr",),
        code=("hare.policies.hare:HAREConfig.alpha_lr",),
    ),
    _entry(
        "\\alpha^{(1)}, \\dots, \\alpha^{(K)}",
        "grid of bonus weights EXP3 draws alpha_h from",
        config=("experiments.*.policies.*.params.alpha_grid",),
        code=("hare.policies.hare:HAREConfig.alpha_grid",),
    ),
    _entry(
        "\\gamma_{\\text{EXP3}}",
        "EXP3's exploration share (and learning rate)",
        config=("experiments.*.policies.*.params.exp3_gamma",),
        code=("hare.policies.hare:HAREConfig.exp3_gamma", "hare.policies.alpha_learning:exp3_update"),
    ),
    _entry(
        "A_h",
        "attention weights of head h (softmax of scores + bonus)",
        code=("hare.model.attention:AttentionOutput.weights",),
    ),
    _entry(
        "z",
        "attended representation (synthesize mode)",
        code=("hare.model.attention:AttentionOutput.synthesis",),
    ),
    _entry(
        "\\theta^0_{h,j}",
        "attention prior of cluster j (mean key)",
        code=("hare.model.attention:UncertaintyAttention.prior_parameters",),
    ),
    _entry(
        "\\hat\\theta_{h,j}",
        "ridge estimate of cluster j's reward (online mean)",
        code=("hare.model.attention:UncertaintyAttention.cluster_estimates", "hare.policies.hare:HAREConfig.mean"),
    ),
    _entry(
        "\\lambda",
        "ridge of the covariances",
        config=("experiments.*.policies.*.params.lam",),
        code=("hare.policies.hare:HAREConfig.lam", "hare.policies.linear:LinUCBConfig.lam", "hare.theory.bounds:lam"),
        results=("results/checks/oful.json: constants.lam",),
    ),
    _entry(
        "\\hat u_i, S_i",
        "user state: posterior mean and precision of user i",
        code=(
            "hare.model.user_state:UserPosterior",
            "hare.policies.hare:HARE.user_states",
            "hare.policies.hare:HAREConfig.user_state",
        ),
    ),
    _entry(
        "\\lambda_{\\min}",
        "smallest eigenvalue of a user's precision",
        code=("hare.model.user_state:UserPosterior.lambda_min", "hare.theory.bounds:lambda_min"),
        results=(f"{TERMS}.json: measured.lambda_min_active_at_T",),
    ),
    # Regret and its decomposition (paper, sec:theory).
    _entry(
        "R(T)",
        "cumulative pseudo-regret",
        code=("hare.experiments.simulation:simulate",),
        results=(f"{RUN_ARRAYS}: cumulative_regret", f"{RUN_SIDECAR}: total_regret_mean"),
    ),
    _entry(
        "\\pi_{\\text{full}}, \\pi_{W^\\ast}, \\pi_{W^\\ast,u^\\ast}",
        "HARE with learned, oracle projections; and true user states",
        code=("hare.policies.hare:HAREConfig.projections", "hare.policies.hare:HAREConfig.user_state"),
        results=(f"{TERMS}.json: variants", f"{TERMS}.npz: regret_full, regret_w_star, regret_w_star_u_star"),
    ),
    _entry(
        "R_{\\text{approx}}",
        "regret of the learned projections",
        code=("hare.theory.bounds:_build_r_approx",),
        results=(f"{TERMS}.npz: term_approx", "results/checks/approx_budget.json: r_approx"),
    ),
    _entry(
        "R_{\\text{user}}",
        "regret of estimating the user state",
        code=("hare.theory.bounds:_build_r_user",),
        results=(f"{TERMS}.npz: term_user",),
    ),
    _entry(
        "R_{\\text{explore}}",
        "regret of cluster-level exploration",
        code=("hare.theory.bounds:_build_r_explore_oful", "hare.theory.bounds:_build_r_explore"),
        results=(f"{TERMS}.npz: term_explore",),
    ),
    _entry(
        "\\epsilon_{\\text{attn}}",
        "attention error E||a(W_hat) - a(W*)||_1",
        code=("hare.theory.bounds:epsilon_attn",),
        results=(f"{TERMS}.json: measured.epsilon_attn", "results/checks/approx_budget.json: epsilon_attn"),
    ),
    _entry(
        "L_f",
        "Lipschitz constant of the reward in the attention",
        code=("hare.theory.bounds:L_f",),
        results=(f"{TERMS}.json: constants.L_f",),
    ),
    _entry(
        "L_u",
        "Lipschitz constant of the reward in the user state",
        code=("hare.theory.bounds:L_u",),
        results=(f"{TERMS}.json: constants.L_u",),
    ),
    _entry(
        "\\delta",
        "failure probability of a bound",
        config=("theory.oful.delta",),
        code=("hare.theory.bounds:delta",),
        results=("results/checks/oful.json: constants.delta", f"{TERMS}.json: config.delta"),
    ),
    _entry(
        "\\beta_t(\\delta)",
        "OFUL confidence radius",
        code=("hare.theory.bounds:oful_confidence_radius", "hare.theory.oful_check:oful_radius"),
        results=("results/checks/oful.json: premise.radius_at_horizon", f"{TERMS}.json: premises.oful_radius_at_T"),
    ),
    _entry(
        "\\sigma",
        "sub-Gaussian noise scale",
        code=("hare.policies.hare:HAREConfig.noise_sigma", "hare.theory.bounds:sigma"),
        results=(f"{TERMS}.json: constants.noise_sigma", "results/checks/oful.json: constants.sigma"),
    ),
    _entry(
        "B_x",
        "norm bound of the projected queries",
        code=("hare.theory.bounds:B_x",),
        results=(f"{TERMS}.json: constants.query_norm_bound", "results/checks/oful.json: constants.B_x"),
    ),
    _entry(
        "S",
        "norm bound of the unknown parameter",
        code=("hare.theory.bounds:S",),
        results=(f"{TERMS}.json: constants.S", "results/checks/oful.json: constants.S"),
    ),
    _entry(
        "\\kappa_u",
        "growth rate of a user's smallest eigenvalue",
        code=("hare.theory.bounds:kappa_u",),
    ),
    # The baselines' symbols.
    _entry(
        "A_a",
        "LinUCB's design matrix of arm a",
        code=("hare.policies.linear:DisjointRidgePolicy",),
    ),
    _entry(
        "\\nu",
        "LinTS posterior scale",
        config=("experiments.*.policies.*.params.nu",),
        code=("hare.policies.linear:LinTSConfig.nu",),
    ),
    _entry(
        "\\epsilon",
        "exploration rate of epsilon-greedy",
        config=("experiments.*.policies.*.params.epsilon",),
        code=("hare.policies.classic:EpsilonGreedyConfig.epsilon",),
    ),
    # LNUCB-TA (Khosravi et al., 2025), as the paper cites it.
    _entry(
        "\\alpha_0",
        "LNUCB-TA's initial exploration rate",
        code=("hare.policies.lnucb_ta:LNUCBTAConfig.alpha_0",),
        results=(f"{RUN_SIDECAR}: tunable.alpha_0",),
    ),
    _entry(
        "\\kappa",
        "LNUCB-TA's global/local attention weight",
        code=("hare.policies.lnucb_ta:LNUCBTAConfig.kappa", "hare.policies.hare:HAREConfig.kappa"),
    ),
    _entry(
        "\\theta_{\\min}, \\theta_{\\max}",
        "LNUCB-TA's range of the adaptive k",
        code=("hare.policies.lnucb_ta:LNUCBTAConfig.theta_min", "hare.policies.lnucb_ta:LNUCBTAConfig.theta_max"),
    ),
    _entry(
        "k_a",
        "LNUCB-TA's adaptive number of neighbours of arm a",
        code=("hare.policies.adaptive_knn:adaptive_k",),
    ),
    _entry(
        "f_a",
        "LNUCB-TA's kNN reward adjustment of arm a",
        code=(
            "hare.policies.adaptive_knn:AdaptiveNeighborMixin.knn_adjustment",
            "hare.policies.lnucb_ta:LNUCBTAConfig.adaptive_knn",
        ),
    ),
    _entry(
        "\\ell_a",
        "LNUCB-TA's linear estimate of arm a",
        code=("hare.policies.lnucb_ta:LNUCBTA.select", "hare.policies.lnucb_ta:LNUCBTAConfig.theta_init"),
    ),
    _entry(
        "g",
        "LNUCB-TA's global mean reward",
        code=("hare.policies.lnucb_ta:LNUCBTA.global_attention", "hare.policies.lnucb_ta:LNUCBTAConfig.global_mean"),
    ),
    _entry(
        "n_a, N_a",
        "LNUCB-TA's local mean reward and pulls of arm a",
        code=("hare.policies.lnucb_ta:LNUCBTA.select",),
    ),
    _entry(
        "\\alpha_a",
        "LNUCB-TA's temporal-attention exploration rate",
        code=("hare.policies.lnucb_ta:LNUCBTA.select", "hare.policies.lnucb_ta:LNUCBTAConfig.attention"),
    ),
    _entry(
        "b",
        "LNUCB-TA Theorem 1's unspecified constant",
        code=("hare.theory.bounds:b_lnucb",),
    ),
)
"""Every symbol of the paper with its config fields, code identifiers and result keys, in the paper's order of
concerns: sizes, HARE's objects, regret and its decomposition, the baselines, LNUCB-TA."""
