"""One claim's verdict as plain values (:class:`ClaimResult`) and the error a claim that cannot be evaluated raises
(:class:`ClaimError`); :mod:`hare.theory.claims.decide` fills the one, every module of the package raises the other."""

from __future__ import annotations

import math
from dataclasses import dataclass

from hare.verdicts import verdict_text


class ClaimError(ValueError):
    """A claim cannot be evaluated (missing file, bad expression, unpaired runs); the message names the claim."""


@dataclass(frozen=True)
class ClaimResult:
    """One claim's verdict: the measured value, its interval ``[low, high]``, the threshold and the status."""

    key: str
    section: str
    statement: str
    measured: float
    low: float
    high: float
    compare: str
    threshold: float | tuple[float, float]
    status: str
    method: str
    sources: tuple[str, ...]
    trivial_bound: float | None = None
    family: str = ""
    margin: float | None = None
    p_values: dict[str, float] | None = None
    adjusted_status: str = ""
    p_value: float = math.nan
    p_adjusted: float = math.nan
    headline: bool = False
    binding: dict[str, str] | None = None
    claim_id: str = ""
    n_runs: int | None = None
    planned_runs: int | None = None
    sd: float = math.nan
    run_sd: float = math.nan
    note: str = ""
    label: str = ""
    comparator_regret: float | None = None
    reason: str = ""
    """Why an INCONCLUSIVE claim is (one of :data:`hare.verdicts.REASONS`); empty for every other status."""
    runs_needed: int | None = None
    """The run count that would decide it: for an UNDECIDABLE AT THIS SCALE claim the count its check names, for an
    INCONCLUSIVE one about the count that settles it after its family's adjustment (never fewer than ran)."""
    threshold_rule: str = ""
    uncertainty: str = ""
    """How the interval was computed: ``per_run``, ``bootstrap``, ``interval`` (a check's), ``share`` (the exact
    interval of a share of runs) or ``exact``."""
    """The threshold's expression where it depends on the run count (``n_runs``), e.g. a share the runs can reach."""

    @property
    def verdict(self) -> str:
        """The family-adjusted status as the register prints it (:func:`hare.verdicts.verdict_text`): an EQUIVALENT
        verdict whose interval excludes the threshold reads as a difference smaller than delta."""
        return verdict_text(self.adjusted_status or self.status, self.low, self.high, self.threshold)

    @property
    def margin_share(self) -> float | None:
        """delta as a share of the comparator's mean total regret on the tuning runs (``None`` without either)."""
        if self.margin is None or self.comparator_regret is None or not self.comparator_regret > 0:
            return None
        return self.margin / self.comparator_regret

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2 if math.isfinite(self.low) and math.isfinite(self.high) else math.nan

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    @property
    def not_run(self) -> bool:
        return self.status == "NOT RUN"
