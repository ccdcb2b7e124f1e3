"""The ``personalization`` config section (:mod:`hare.experiments.studies.personalization`): its settings, each field
checked on construction (its type, and the counts >= 1). The config boundary reads the section, its ``text`` and the
rule between them with :func:`hare.experiments.settings.sections.personalization_settings`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hare.novelty import NOVELTY_THRESHOLD
from hare.typed import TypedFields


@dataclass(frozen=True)
class PersonalizationConfig(TypedFields):
    """Settings of :func:`personalization_report`.

    text: :class:`TextConfig` fields; n_runs, horizon, seed; HARE (``hare_synthesize``) with
    ``n_heads``, ``key_dim``, ``alpha`` and learned projections fitted on the warm start's ``n_logged``
    logged interactions for ``fit_steps`` Adam steps at ``fit_lr``; random_init_std: std of the random projections
    (None:
    ``1/sqrt(fan_in)``); decoder: :class:`~hare.model.decoder.DecoderConfig` shape fields;
    pretrain_steps, pretrain_lr; finetune_lr and finetune_every (rounds per reward-weighted step);
    n_eval_queries: queries of the divergence measurement (the first of the bank); novelty_threshold;
    entropy_window (rounds); temperature of sampled decoding.
    """

    text: dict = field(default_factory=dict)
    n_runs: int = 3
    horizon: int = 300
    seed: int = 0
    n_heads: int = 2
    key_dim: int = 8
    alpha: float = 1.0
    n_logged: int = 2000
    fit_steps: int = 300
    fit_lr: float = 0.03
    random_init_std: float | None = None
    decoder: dict = field(default_factory=lambda: {"d_model": 64, "n_layers": 2, "n_heads": 4, "prefix_len": 4})
    pretrain_steps: int = 400
    pretrain_lr: float = 3e-3
    finetune_lr: float = 1e-3
    finetune_every: int = 10
    n_eval_queries: int = 20
    novelty_threshold: float = NOVELTY_THRESHOLD
    entropy_window: int = 50
    temperature: float = 1.0

    def __post_init__(self) -> None:
        for name in (
            "n_runs",
            "horizon",
            "n_logged",
            "pretrain_steps",
            "finetune_every",
            "n_eval_queries",
            "entropy_window",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"personalization.{name}: must be >= 1 (got {getattr(self, name)})")
