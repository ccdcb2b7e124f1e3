TERMS_JSON = "results/checks/regret_terms.json"
TERMS_NPZ = "results/checks/regret_terms.npz"
PERSONALIZATION_JSON = "results/checks/personalization.json"
CONVERGENCE_JSON = "results/checks/convergence.json"
COST_GROWTH_JSON = "results/checks/cost_growth.json"
POOL_SCALING_JSON = "results/checks/pool_scaling.json"
CLAIMS_JSON = "results/claims.json"
PUBLISHED_TABLE = "paper/published/lnucb_ta_table2.csv"
LOCK_IN_JSON = "results/checks/lock_in.json"
LOCK_IN_MACROS = "paper/generated/lock_in_macros.tex"
EXPLORATION_TAILS_JSON = "results/checks/exploration_tails.json"
EXPLORATION_TAILS_MACROS = "paper/generated/exploration_tails_macros.tex"
LEARNED_ALPHA_JSON = "results/checks/learned_alpha.json"
LEARNED_ALPHA_MACROS = "paper/generated/learned_alpha_macros.tex"
CREDIT_JSON = "results/checks/credit.json"
CREDIT_MACROS = "paper/generated/credit_macros.tex"


# name -> parameters of the notebook; "runs" lists every file it reads (the rule's inputs), JSON and
# check files included, which are passed again as named parameters.
NOTEBOOK_INPUTS = {
    "regret_curves": lambda: {"runs": run_files("synthetic") + run_files("classification")},
    "replay": lambda: {"runs": run_files("replay")},
    "ablations": lambda: {"runs": run_files("hare_ablations") + run_files("sensitivity"), "experiments": ["hare_ablations", "sensitivity"]},
    "decomposition": lambda: {"runs": [TERMS_JSON, TERMS_NPZ], "terms_json": TERMS_JSON, "terms_npz": TERMS_NPZ},
    "personalization": lambda: {"runs": [PERSONALIZATION_JSON], "personalization_json": PERSONALIZATION_JSON},
    "convergence": lambda: {"runs": [CONVERGENCE_JSON], "convergence_json": CONVERGENCE_JSON},
    "cost_growth": lambda: {"runs": [COST_GROWTH_JSON], "cost_growth_json": COST_GROWTH_JSON},
    "pool_scaling": lambda: {"runs": [POOL_SCALING_JSON], "pool_scaling_json": POOL_SCALING_JSON},
    "runtime": lambda: {"runs": run_files(), "scaling_experiment": "scaling"},
    "claims_matrix": lambda: {"runs": [CLAIMS_JSON], "claims_json": CLAIMS_JSON},
    "lock_in": lambda: {
        "runs": run_files("published") + run_files("classification") + run_files("exploration_sweep") + lock_in_tuning_files() + [PUBLISHED_TABLE],
        "published_table": PUBLISHED_TABLE,
    },
    "reproduction_cells": lambda: {"runs": run_files("published") + [PUBLISHED_TABLE], "published_table": PUBLISHED_TABLE},
    "exploration_tails": lambda: {"runs": run_files("hare_online") + run_files("hare_online_warm")},
    "learned_alpha": lambda: {"runs": run_files("hare_online") + run_files("hare_online_warm")},
    "credit": lambda: {"runs": run_files("synthesis_credit") + run_files("synthesis_credit_warm")},
}
NOTEBOOK_FIGURES = {
    "regret_curves": ["paper/figures/regret_curves.pdf"],
    "replay": ["paper/figures/replay.pdf"],
    "ablations": ["paper/figures/hare_ablations.pdf", "paper/figures/sensitivity.pdf"],
    "decomposition": ["paper/figures/decomposition.pdf"],
    "personalization": ["paper/figures/personalization.pdf"],
    "convergence": ["paper/figures/convergence.pdf"],
    "cost_growth": ["paper/figures/cost_growth.pdf"],
    "pool_scaling": ["paper/figures/pool_scaling.pdf"],
    "runtime": ["paper/figures/runtime.pdf"],
    "claims_matrix": ["paper/figures/claims_matrix.pdf", "paper/figures/claims_matrix_families.pdf"],
    "lock_in": ["paper/figures/lock_in.pdf"],
    "reproduction_cells": ["paper/figures/reproduction_cells.pdf"],
    "exploration_tails": ["paper/figures/exploration_tails.pdf"],
    "learned_alpha": ["paper/figures/learned_alpha.pdf"],
    "credit": ["paper/figures/credit.pdf"],
}
# name -> files other than figures that the notebook writes (JSON checks, LaTeX macros): outputs of its execute rule,
# passed as the parameter ``outputs`` ({key: path}). Figures stay in NOTEBOOK_FIGURES: each one is a report entry with
# its caption report/<figure>.rst and must be a vector PDF (tests/notebooks/test_notebooks.py).
NOTEBOOK_OUTPUTS = {
    "lock_in": {"json": LOCK_IN_JSON, "macros": LOCK_IN_MACROS},
    "exploration_tails": {"json": EXPLORATION_TAILS_JSON, "macros": EXPLORATION_TAILS_MACROS},
    "learned_alpha": {"json": LEARNED_ALPHA_JSON, "macros": LEARNED_ALPHA_MACROS},
    "credit": {"json": CREDIT_JSON, "macros": CREDIT_MACROS},
}


rule notebook_to_ipynb:
    """jupytext percent script -> .ipynb (papermill executes notebooks, not scripts); cell ids fixed by position."""
    input:
        "notebooks/{notebook}.py",
    output:
        "results/notebooks/{notebook}.source.ipynb",
    log:
        "results/logs/notebooks/{notebook}.jupytext.log",
    params:
        code=code("notebook-source"),
        outputs=OUTPUTS,
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} notebook-source {input:q} --out {output:q} > {log:q} 2>&1"


for _notebook, _figures in NOTEBOOK_FIGURES.items():

    rule:
        """papermill with the parameters cell set to this run's inputs and outputs; figures only read result files.

        The executed notebook has fixed cell ids and no timestamps (hare.report.notebooks), so reruns give the same bytes.
        """
        name:
            f"execute_{_notebook}"
        input:
            notebook=f"results/notebooks/{_notebook}.source.ipynb",
            data=lambda wc, notebook=_notebook: NOTEBOOK_INPUTS[notebook]()["runs"],
        output:
            executed=f"results/notebooks/{_notebook}.ipynb",
            figures=[figure_report(f) for f in _figures],
            others=list(NOTEBOOK_OUTPUTS.get(_notebook, {}).values()),
        params:
            code=code(notebook=_notebook),
            outputs=OUTPUTS,
            hare=HARE,
            parameters=lambda wc, notebook=_notebook, figures=_figures: json.dumps(
                {**NOTEBOOK_INPUTS[notebook](), "figures": figures, **({"outputs": NOTEBOOK_OUTPUTS[notebook]} if notebook in NOTEBOOK_OUTPUTS else {})}
            ),
        log:
            f"results/logs/notebooks/{_notebook}.papermill.log",
        conda:
            "../envs/hare.yaml"
        shell:
            "SOURCE_DATE_EPOCH=0 {params.hare} --record {params.code:q} --outputs {params.outputs:q} notebook-execute {input.notebook:q} --out {output.executed:q} "
            "--parameters {params.parameters:q} > {log:q} 2>&1"


rule render_notebook:
    """Executed notebook -> HTML for readers."""
    input:
        "results/notebooks/{notebook}.ipynb",
    output:
        "results/notebooks/{notebook}.html",
    log:
        "results/logs/notebooks/{notebook}.nbconvert.log",
    params:
        code=code("notebook-html"),
        outputs=OUTPUTS,
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} notebook-html {input:q} --out {output:q} > {log:q} 2>&1"


# Every notebook with figures is a final target (rule all reads NOTEBOOKS through final_targets()
# after every rule file is included, so this replaces the list of rules/common.smk).
NOTEBOOKS = list(NOTEBOOK_FIGURES)
