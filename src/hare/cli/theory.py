"""Subcommands of the theory checks: the bounds, OFUL, the regret decomposition and its scaling, convergence and
personalization. Each computes with :mod:`hare.theory` (or :mod:`hare.experiments`) and writes through a
:mod:`hare.report` writer.

A check driven by one config section (``--config-json``) reads it through the config boundary, as the workflow's
whole config is read (:func:`hare.experiments.settings.theory_section`,
:func:`hare.experiments.settings.study_settings`): a bad value is one line naming its key path
(``theory.approx_budget.budgets: ...``, exit status 2), and the study runs on the settings read there (typed, frozen)
without checking them again."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from hare.cli.arguments import json_object, npz_file, output_file, probability

if TYPE_CHECKING:
    from hare.experiments.settings.theory_settings import TheorySettings


def cmd_bounds(args: argparse.Namespace) -> int:
    from hare.report.bounds import write_bounds_tex
    from hare.theory.bound_table import bound_latex

    write_bounds_tex(Path(args.out), bound_latex())
    return 0


def cmd_check_oful(args: argparse.Namespace) -> int:
    from hare.experiments.job_setup import build_environment, resolve_device
    from hare.experiments.job_spec import JobSpec
    from hare.theory.oful_check import oful_check

    sidecar = json.loads(Path(args.run).with_suffix(".json").read_text())
    env = build_environment(JobSpec.from_dict(sidecar["job"]), resolve_device("cpu"))
    result = oful_check(args.run, sidecar, env, args.delta, args.out_json, args.out_tex)
    print(
        f"OFUL bound {'holds' if result['holds'] else 'VIOLATED'} "
        f"({'vacuous' if result['vacuous'] else 'non-vacuous'}); measured/bound at T = {result['ratio_at_horizon']:.3g}"
    )
    return 0


def _theory_section(name: str, args: argparse.Namespace) -> TheorySettings:
    """The ``theory.<name>`` section given as ``--config-json``, read into its settings at the config boundary."""
    from hare.experiments.settings import theory_section

    return theory_section(name, args.config_json)


def cmd_decomposition(args: argparse.Namespace) -> int:
    from hare.theory.decomposition import decomposition_check

    settings = _theory_section("decomposition", args)
    decomposition_check(settings, out_json=args.out_json, out_tex=args.out_tex, out_npz=args.out_npz)
    return 0


def cmd_decomposition_grid(args: argparse.Namespace) -> int:
    from hare.theory.decomposition_grid import decomposition_grid_check

    decomposition_grid_check(_theory_section("decomposition_grid", args), out_json=args.out_json, out_tex=args.out_tex)
    return 0


def cmd_approx_budget(args: argparse.Namespace) -> int:
    from hare.theory.approx_budget import approx_budget_check, exponent_summary

    settings = _theory_section("approx_budget", args)
    print(exponent_summary(approx_budget_check(settings, out_json=args.out_json, out_tex=args.out_tex)))
    return 0


def cmd_heads_alpha(args: argparse.Namespace) -> int:
    from hare.theory.heads_alpha import exponent_summary, heads_alpha_check

    settings = _theory_section("heads_alpha", args)
    print(exponent_summary(heads_alpha_check(settings, out_json=args.out_json, out_tex=args.out_tex)))
    return 0


def cmd_convergence(args: argparse.Namespace) -> int:
    from hare.experiments.settings import convergence, study_settings
    from hare.experiments.studies.convergence import convergence_check

    settings = study_settings(convergence.WHERE, args.config_json)
    convergence_check(settings, out_json=args.out_json, out_tex=args.out_tex, out_npz=args.out_npz)
    return 0


def cmd_personalization(args: argparse.Namespace) -> int:
    from hare.experiments.settings.sections import personalization_settings
    from hare.experiments.studies.personalization import personalization_report

    report = personalization_report(personalization_settings(args.config_json), args.out)
    print(
        json.dumps(
            {k: report[k] for k in ("divergence_z", "similarity_z", "divergence_text", "perplexity", "novelty")},
            indent=2,
        )
    )
    return 0


def _config_and_outputs(p: argparse.ArgumentParser, npz: bool = False, config_help: str | None = None) -> None:
    """The options of a check driven by one config section: ``--config-json``, ``--out-json``, ``--out-tex`` and
    optionally ``--out-npz``."""
    p.add_argument("--config-json", type=json_object, required=True, help=config_help)
    p.add_argument("--out-json", type=output_file, required=True)
    p.add_argument("--out-tex", type=output_file, required=True)
    if npz:
        p.add_argument("--out-npz", type=output_file)


def add_subcommands(sub: argparse._SubParsersAction) -> None:
    """Register the theory subcommands on ``sub``."""
    p = sub.add_parser("bounds", help="write the sympy-derived bounds as LaTeX macros")
    p.add_argument("--out", type=output_file, required=True)
    p.set_defaults(func=cmd_bounds)

    p = sub.add_parser("check-oful", help="measured LinUCB regret against the OFUL bound")
    p.add_argument("--run", type=npz_file, required=True, help="a LinUCB run file on a synthetic environment")
    p.add_argument("--delta", type=probability, default=0.05)
    p.add_argument("--out-json", type=output_file, required=True)
    p.add_argument("--out-tex", type=output_file, required=True)
    p.set_defaults(func=cmd_check_oful)

    p = sub.add_parser(
        "decomposition",
        help="the measured regret decomposition against its bounds",
        description="The measured three-term regret decomposition (paper, sec:decomposition).",
    )
    _config_and_outputs(p, npz=True)
    p.set_defaults(func=cmd_decomposition)

    p = sub.add_parser(
        "decomposition-grid",
        help="the measured regret decomposition over a (C, d_k) grid",
        description="The measured regret decomposition over a grid of cluster counts ``C`` and key dimensions ``d_k``.",
    )
    _config_and_outputs(p)
    p.set_defaults(func=cmd_decomposition_grid)

    p = sub.add_parser(
        "approx-budget",
        help="R_approx against the logged budget M and its exponent in M",
        description='``R_approx`` against the logged budget ``M`` (paper, sec:decomposition, "Against the logged '
        'budget").',
    )
    _config_and_outputs(p)
    p.set_defaults(func=cmd_approx_budget)

    p = sub.add_parser(
        "heads-alpha",
        help="HARE's regret over heads H and bonus weights alpha, and its exponents",
        description="HARE's regret against the number of heads ``H`` and the bonus weight ``alpha`` "
        '(paper, sec:decomposition, "Heads and bonus weight").',
    )
    _config_and_outputs(p)
    p.set_defaults(func=cmd_heads_alpha)

    p = sub.add_parser(
        "convergence",
        help="stability of HARE's cluster choices and the local regret slope along a run",
        description="Does updating the covariances and the attention online *together* converge? "
        "(An open question of the source notes; paper, fig:convergence.)",
    )
    _config_and_outputs(p, npz=True, config_help="the theory.convergence config section as JSON")
    p.set_defaults(func=cmd_convergence)

    p = sub.add_parser(
        "personalization",
        help="personalization metrics: divergence, entropy, novelty, perplexity",
        description='Personalization metrics of synthesize mode (paper, sec:method, "Synthesize mode and decoder"; '
        "fig:personalization).",
    )
    p.add_argument("--config-json", type=json_object, default={}, help="PersonalizationConfig fields as a JSON object")
    p.add_argument("--out", type=output_file, required=True, help="result JSON (written atomically)")
    p.set_defaults(func=cmd_personalization)
