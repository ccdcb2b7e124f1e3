"""When an output of synthesize mode is novel (paper, sec:method, "Synthesize mode and decoder").

An output ``z`` is *novel* when its nearest pool item has cosine similarity below :data:`NOVELTY_THRESHOLD`
(:func:`hare.envs.base.nearest_item_cosine`): the round loop counts novel outputs of synthesize-mode jobs
(:mod:`hare.experiments.simulation`), and the personalization study measures decoded outputs against the same
threshold by default (:class:`hare.experiments.settings.personalization.PersonalizationConfig`). A base-layer module
(plain data, no import of ``hare``), so that a job's code does not include the study's settings.
"""

from __future__ import annotations

NOVELTY_THRESHOLD = 0.9
"""The cosine below which an output's nearest pool item does not explain it."""
