"""Run files -> the rows of the results tables (CSV for readers and checks), handed to :mod:`hare.report` for LaTeX.

A row summarises one run file (:func:`summarise_run`): total pseudo-regret (or reward) of the reported runs, mean and
standard deviation over runs (ddof = 1), with the run count, and, from the run sidecars alone:

* its information regime (``regime``, ``n_logged``; runs without them, older files, are cold);
* the value each hyperparameter took (:func:`hyperparameter_choice`): for a tuned policy the point chosen on the
  tuning runs (with the tuning labels tied with it), for an entry the config keeps ``fixed`` its set value and the
  reason, otherwise the set value of the policy's tunable hyperparameters. The CSV carries them in extra columns.

:func:`write_table` writes a table of any kind: the CSV from these rows (or from the published and reproduction
rows of :mod:`hare.experiments.tables.reproduction`), the LaTeX through :mod:`hare.report.tables` and
:mod:`hare.report.reproduction`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from hare.experiments.tables.comparison import comparison_rows
from hare.experiments.tables.reproduction import READINGS, REPRODUCTION_FIELDS, published_rows, reproduction_rows
from hare.io import read_npz, write_text
from hare.regimes import REGIMES
from hare.report.table_cells import regime_sentence
from hare.report.tables import write_table_tex

FIELDS = (
    "experiment",
    "environment",
    "policy",
    "policy_name",
    "params",
    "n_runs",
    "horizon",
    "mean",
    "std",
    "std_over_mean_pct",
    "mean_reward",
    "regime",
    "n_logged",
    "choice",
    "chosen",
    "tuned_grid",
    "selected_from",
    "ties",
    "fixed",
)
"""CSV columns. ``choice``: ``tuned`` (chosen on tuning runs), ``fixed`` (kept by the config, reason in ``fixed``),
``set`` (not tuned: an experiment without tuning) or ``none`` (no tunable hyperparameter); ``chosen``: JSON of the
values of the tuned (or tunable) hyperparameters; ``ties``: JSON list of the tuning labels tied with the chosen one
(empty without a tie)."""
TIMING_FIELDS = ("wall_time_s", "peak_rss_mb", "device")
"""Measured, not reproducible bit for bit: only the compute, scaling and replay tables carry them."""
TABLE_KINDS = ("regret", "sensitivity", "scaling", "compute", "published", "replay", "reproduction")


def regime_of_run(sidecar: dict) -> tuple[str, int]:
    """``(regime, n_logged)`` of a run: the sidecar's record, else its job's, else cold (older files)."""
    job = sidecar.get("job", {})
    regime = sidecar.get("regime") or job.get("regime") or "cold"
    if regime not in REGIMES:
        raise ValueError(f"run of {job.get('label')!r}: unknown regime {regime!r}")
    n_logged = sidecar.get("n_logged", job.get("n_logged", 0)) if regime == "warm" else 0
    return regime, int(n_logged or 0)


def _tunable(policy: str) -> tuple[str, ...]:
    from hare.policies.base import policy_class

    try:
        return tuple(policy_class(policy).config_class.tunable)
    except KeyError:
        return ()


def _set_values(policy: str, params: dict, names: tuple[str, ...]) -> dict:
    """The values the tunable ``names`` take for ``params`` (the policy's defaults filled in); for parameters the
    policy rejects, those of ``names`` that ``params`` sets."""
    from hare.policies.base import tunable_values

    try:
        return tunable_values(policy, params)
    except (KeyError, TypeError, ValueError):
        return {name: params[name] for name in names if name in params}


def hyperparameter_choice(job: dict, tunable: dict | None = None) -> dict:
    """How a report run's hyperparameters were set, from its job specification (the sidecar's ``job``) and the
    values of the policy's tunable hyperparameters the sidecar records (``tunable``; older sidecars: derived from
    the policy's config class, which imports the policies)."""
    if "tuned_grid" in job:
        grid = job["tuned_grid"]
        ties = list(job.get("selection_ties") or [])
        return {
            "choice": "tuned",
            "chosen": json.dumps({k: job["params"].get(k) for k in sorted(grid)}, sort_keys=True),
            "tuned_grid": json.dumps(grid, sort_keys=True),
            "selected_from": job.get("selected_from", ""),
            "ties": json.dumps(ties if len(ties) > 1 else []),
            "fixed": "",
        }
    if tunable is None:
        names = _tunable(job["policy"])
        tunable, has_tunable = _set_values(job["policy"], job["params"], names), bool(names)
    else:
        has_tunable = bool(tunable)
    choice = "fixed" if "fixed" in job else "set" if has_tunable else "none"
    return {
        "choice": choice,
        "chosen": json.dumps(tunable, sort_keys=True),
        "tuned_grid": "",
        "selected_from": "",
        "ties": json.dumps([]),
        "fixed": job.get("fixed", ""),
    }


def summarise_run(npz_path: str | Path) -> dict:
    """One row per run file: total regret statistics over runs plus the sidecar's provenance figures."""
    npz_path = Path(npz_path)
    sidecar = json.loads(npz_path.with_suffix(".json").read_text())
    arrays = read_npz(npz_path)
    job = sidecar["job"]
    if "total_regret" not in arrays:
        return _summarise_replay(arrays, sidecar)
    totals = arrays["total_regret"]
    mean = float(totals.mean())
    std = float(totals.std(ddof=1)) if totals.size > 1 else float("nan")
    regime, n_logged = regime_of_run(sidecar)
    return {
        "experiment": job["experiment"],
        "environment": job["environment"]["name"],
        "run_file": str(npz_path),
        "dataset": job["environment"].get("dataset") or "",
        "preparation": job["environment"].get("preparation", "project") if job["environment"].get("dataset") else "",
        "policy": job["label"],
        "policy_name": job["policy"],
        "params": json.dumps(job["params"], sort_keys=True),
        "n_runs": int(totals.size),
        "horizon": int(sidecar["horizon"]),
        "mean": mean,
        "std": std,
        "std_over_mean_pct": 100.0 * std / mean if mean > 0 else float("nan"),
        "runs_above_half": int((totals > sidecar["horizon"] / 2).sum()),
        "mean_reward": float(arrays["total_reward"].mean()),
        "regime": regime,
        "n_logged": n_logged,
        "warm_start_digest": sidecar.get("warm_start_digest"),
        **hyperparameter_choice(job, sidecar.get("tunable")),
        "wall_time_s": float(sidecar["wall_time_s"]),
        "peak_rss_mb": float(sidecar["peak_memory"].get("host_max_rss_mb", float("nan"))),
        "device": sidecar["device"],
    }


def _std(values: np.ndarray) -> float:
    return float(values.std(ddof=1)) if values.size > 1 else float("nan")


def _summarise_replay(arrays: dict, sidecar: dict) -> dict:
    """A replay run (Li et al. 2011): rewards of accepted rounds and off-policy estimates, no regret."""
    job = sidecar["job"]
    mean_reward = arrays["total_mean_reward"]
    regime, n_logged = regime_of_run(sidecar)
    return {
        "experiment": job["experiment"],
        "environment": job["environment"]["name"],
        "policy": job["label"],
        "policy_name": job["policy"],
        "params": json.dumps(job["params"], sort_keys=True),
        "n_runs": int(arrays["total_reward"].size),
        "horizon": int(sidecar["horizon"]),
        "mean": float("nan"),
        "std": float("nan"),
        "std_over_mean_pct": float("nan"),
        "mean_reward": float(arrays["total_reward"].mean()),
        "regime": regime,
        "n_logged": n_logged,
        **hyperparameter_choice(job, sidecar.get("tunable")),
        "std_reward": _std(arrays["total_reward"]),
        "accepted": float(arrays["total_accepted"].mean()),
        "reward_per_accepted": float(np.nanmean(mean_reward)),
        "reward_per_accepted_std": _std(mean_reward[np.isfinite(mean_reward)]),
        **{name: float(arrays[name].mean()) for name in ("ope_ipw", "ope_snipw", "ope_dm", "ope_dr")},
        "ope_ipw_se": float(arrays["ope_ipw_se"].mean()),
        "wall_time_s": float(sidecar["wall_time_s"]),
        "peak_rss_mb": float(sidecar["peak_memory"].get("host_max_rss_mb", float("nan"))),
        "device": sidecar["device"],
    }


def summarise_runs(run_files: Iterable[str | Path]) -> list[dict]:
    """Rows of every run file; the warm runs of one (experiment, environment) must record the same warm start."""
    rows = sorted(
        (summarise_run(p) for p in run_files), key=lambda r: (r["environment"], r["regime"], r["n_logged"], r["policy"])
    )
    check_same_warm_start(rows)
    return rows


def check_same_warm_start(rows: list[dict]) -> None:
    """``ValueError`` naming the experiment, environment and policies when the warm runs of one (experiment,
    environment) were fed different logs (their sidecars' ``warm_start_digest`` differ)."""
    digests: dict[tuple[str, str], dict[str, list[str]]] = {}
    for r in rows:
        if r["regime"] == "warm":
            digests.setdefault((r["experiment"], r["environment"]), {}).setdefault(
                str(r.get("warm_start_digest")), []
            ).append(r["policy"])
    for (experiment, environment), by_digest in digests.items():
        if len(by_digest) > 1:
            detail = "; ".join(
                f"{digest}: {', '.join(sorted(policies))}" for digest, policies in sorted(by_digest.items())
            )
            raise ValueError(
                f"experiment {experiment!r}, environment {environment!r}: the warm runs were fed different logs "
                f"({detail})"
            )


def rows_to_csv(rows: list[dict], fields: tuple[str, ...] = FIELDS) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{row[k]:.6g}" if isinstance(row[k], float) else row[k]) for k in fields if k in row})
    return buffer.getvalue()


REPLAY_FIELDS = (
    FIELDS
    + TIMING_FIELDS
    + (
        "std_reward",
        "accepted",
        "reward_per_accepted",
        "reward_per_accepted_std",
        "ope_ipw",
        "ope_snipw",
        "ope_dm",
        "ope_dr",
        "ope_ipw_se",
    )
)
PUBLISHED_FIELDS = FIELDS + (
    "dataset",
    "preparation",
    "published_mean",
    "published_std",
    "published_n_runs",
    "published_horizon",
    "comparable",
    "verdict",
    "source",
)
KIND_FIELDS = {
    "scaling": FIELDS + TIMING_FIELDS,
    "compute": FIELDS + TIMING_FIELDS,
    "replay": REPLAY_FIELDS,
    "published": PUBLISHED_FIELDS,
    "reproduction": REPRODUCTION_FIELDS,
}
"""CSV columns of each table kind (others: :data:`FIELDS`)."""


def write_table(
    kind: str,
    run_files: Iterable[str | Path],
    csv_path: str | Path,
    tex_path: str | Path,
    caption: str,
    label: str,
    policies: list[str] | None = None,
    published_csv: str | Path | None = None,
    text_path: str | Path | None = None,
) -> list[dict]:
    """Build the table of ``kind`` from run files (of one experiment or several); ``policies`` keeps only those config
    names. Returns the rows of its CSV.

    The caption written to the ``.tex`` is ``caption`` (plain text from the config, TeX specials escaped) followed by
    the regime sentence of the runs (:func:`hare.report.table_cells.regime_sentence`). A ``reproduction`` table
    (:func:`hare.experiments.tables.reproduction.reproduction_rows`) also writes its generated paragraphs
    (:func:`hare.report.reproduction.reproduction_text`) to ``text_path`` when given, with Table 2's comparison
    restated (:func:`hare.experiments.tables.comparison.comparison_rows`); other kinds take none.
    """
    rows = summarise_runs(run_files)
    if policies:
        rows = [r for r in rows if r["policy_name"] in policies or r["policy"] in policies]
    if not rows:
        raise ValueError(f"no run matches the table {label!r} (policies {policies})")
    if kind in ("published", "reproduction") and published_csv is None:
        raise ValueError(f"a {kind} table needs --published")
    sentence = regime_sentence(rows) if kind in ("published", "reproduction") else ""
    comparison = None
    if kind == "reproduction":
        comparison = comparison_rows(rows, published_csv)
        rows = reproduction_rows(rows, published_csv)
    elif kind == "published":
        rows = published_rows(rows, published_csv)
    write_table_tex(tex_path, kind, rows, caption, label, sentence, READINGS, text_path, comparison)
    write_text(csv_path, rows_to_csv(rows, KIND_FIELDS.get(kind, FIELDS)))
    return rows
