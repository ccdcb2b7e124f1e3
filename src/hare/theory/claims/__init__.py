"""The claims register: every quantitative claim of the paper, decided on a 95% interval.

This docstring is the grammar of ``paper/claims.yaml``; the modules of the package implement it, one concern each:

* :mod:`hare.theory.claims.register` loads the register and expands its families over the configurations;
* :mod:`hare.theory.claims.expressions` evaluates its expressions over the loaded inputs (the whitelist);
* :mod:`hare.theory.claims.decide` measures each claim with its uncertainty, decides its status and adjusts the
  families (:class:`hare.theory.claims.result.ClaimResult` holds the verdict);
* :mod:`hare.theory.claims.decidable` checks, before anything runs, that the best outcome at the run count a
  configuration gives can decide each claim (``hare validate-config`` prints what cannot, ``hare claims`` marks it
  UNDECIDABLE AT THIS SCALE);
* :mod:`hare.theory.claims.reasons` says why an INCONCLUSIVE claim is and how many runs would settle it;
* :mod:`hare.theory.claims.documents` writes ``results/claims.md`` and ``results/claims.json`` (the TeX of the paper
  is rendered from the JSON by :mod:`hare.report.register`).

``paper/claims.yaml`` lists claims. Each names its result files (``inputs``), the measured
quantity, how its uncertainty is computed, and the threshold it is compared with::

    - key: hare_beats_linucb_mushroom_classification
      section: this paper, Table classification
      statement: HARE has lower total regret than LinUCB on Mushroom (paired over runs).
      inputs: {a: results/runs/classification/mushroom/hare.npz, b: results/runs/classification/mushroom/linucb.npz}
      per_run: a.total_regret - b.total_regret
      compare: "<"
      threshold: 0

Uncertainty, exactly one of:

``per_run: <expr>``
    a vector over runs, ``d_1 .. d_n``; measured ``mean(d)`` with the Student-t interval
    ``mean(d) +- t_{0.975, n-1} sd(d) / sqrt(n)``. A difference of two policies' arrays is the
    paired difference: the engine checks from the sidecars that every run-file input of the
    claim shares its environment draws (same experiment, environment, base seed, role, runs).
``bootstrap: <expr>``
    a statistic of the run files (e.g. a ratio of standard deviations over runs); measured on
    all runs, interval the 2.5 and 97.5 percentiles over :data:`hare.theory.claims.decide.N_BOOT` resamples of the run
    indices, drawn jointly for every run-file input (they are paired, as above).
``measured: <expr>`` with ``interval: [<low expr>, <high expr>]``
    a quantity whose interval the check that produced it computed (``ci_low``, ``ci_high``).
``measured: <expr>`` with ``exact: <reason>``
    a quantity without sampling uncertainty (a count, a closed form); the interval is the point.

Status, for ``compare`` in ``< <= > >=`` against ``threshold`` (:func:`hare.verdicts.decide`):

=============  ===========================================================================
PASS           the whole interval satisfies the comparison
FAIL           the whole interval violates it, or the measurement is undefined (NaN, null)
INCONCLUSIVE   the interval straddles the threshold, though the run count could decide it; it
               says why (:data:`hare.verdicts.REASONS`)
UNDECIDABLE    (AT THIS SCALE) no outcome at the claim's run count could decide it
               (:mod:`hare.theory.claims.decidable`) and its runs did not decide it anyway
VACUOUS        the threshold is a bound (``trivial_bound: <expr>`` given) at or above the
               trivial bound ``T * Delta_max``: the bound says nothing, whatever is measured
NOT RUN        the running configuration produces none of the claim's run files
=============  ===========================================================================

A *family* stands for one claim per combination of its ``for_each`` values (``family: <name>`` groups
members, also of several entries, for the counts per status the paper prints). A value list is
either literal or a reference to the configurations, ``{config: <dotted path>, exclude: [...]}``:
a list (``experiments.classification.environments``) or a mapping whose keys are taken
(``experiments.classification.policies``), united over the running configuration and the
register's ``reference_configs`` (the default and paper configurations), in order of first
appearance; its path may use a variable bound before it (``experiments.{experiment}.environments``). A member whose run
files the running configuration does not produce is listed as
NOT RUN, never dropped: the smoke build shows what it skips.
:func:`hare.theory.claims.register.expand_claims` replaces every ``{name}`` in the templated fields by each value of
the Cartesian product of the lists (first list outermost).

Expressions are evaluated by a whitelist evaluator over the loaded inputs (``.json`` as nested
mappings, ``.npz`` as arrays): arithmetic, attribute or item access, and
:data:`hare.theory.claims.expressions.FUNCTIONS`. Nothing is ``eval``'d. ``n_runs`` is the claim's run count (the
length of its run files; before anything runs, the configuration's), so that a threshold may depend on it and on
nothing the runs measure: ``threshold: "max(0.05, zero_event_bound(n_runs))"`` is the larger of 5% and the smallest
share ``n_runs`` runs can establish (the no-lock-in claims). A claim that fails is reported as FAIL
with its numbers; it never stops the build.

Margins, p-values, the adjustment within families and run plans are :mod:`hare.verdicts`: a claim may
declare ``margin: <expr>`` (its equivalence margin delta), ``comparator_regret: <expr>`` (the comparator's mean total
regret on the tuning runs, of which delta is printed as a percentage) and ``power: [<expr>, <expr>]`` (per-run totals
of the two compared policies on the tuning runs, whose paired spread plans the run count). A comparison of policy
``a`` against ``b`` reads all three from the margins file of its experiment and dataset
(:mod:`hare.experiments.margins`, :data:`hare.experiments.margins.MARGIN_RULE`): ``margin: m.policies.b.margin``,
``comparator_regret: m.policies.b.mean``, ``power: [m.policies.a.totals, m.policies.b.totals]``; a grid point of a
planned sweep (``plan: true``) by item access, ``m.policies["lnucb_ta@alpha_0=0.1"].margin``. On the replay environment
(no regret) the margins file's quantity is the replay reward (``comparator_regret`` then reads its mean).
"""
