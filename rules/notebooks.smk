TERMS_JSON = "results/checks/regret_terms.json"
TERMS_NPZ = "results/checks/regret_terms.npz"
PERSONALIZATION_JSON = "results/checks/personalization.json"
CONVERGENCE_JSON = "results/checks/convergence.json"
CLAIMS_JSON = "results/claims.json"

# name -> parameters of the notebook; "runs" lists every file it reads (the rule's inputs), JSON and
# check files included, which are passed again as named parameters.
NOTEBOOK_INPUTS = {
    "regret_curves": lambda: {"runs": run_files("synthetic") + run_files("classification")},
    "replay": lambda: {"runs": run_files("replay")},
    "ablations": lambda: {"runs": run_files("hare_ablations") + run_files("sensitivity"), "experiments": ["hare_ablations", "sensitivity"]},
    "decomposition": lambda: {"runs": [TERMS_JSON, TERMS_NPZ], "terms_json": TERMS_JSON, "terms_npz": TERMS_NPZ},
    "personalization": lambda: {"runs": [PERSONALIZATION_JSON], "personalization_json": PERSONALIZATION_JSON},
    "convergence": lambda: {"runs": [CONVERGENCE_JSON], "convergence_json": CONVERGENCE_JSON},
    "runtime": lambda: {"runs": run_files(), "scaling_experiment": "scaling"},
    "claims_matrix": lambda: {"runs": [CLAIMS_JSON], "claims_json": CLAIMS_JSON},
}
NOTEBOOK_FIGURES = {
    "regret_curves": ["paper/figures/regret_curves.pdf"],
    "replay": ["paper/figures/replay.pdf"],
    "ablations": ["paper/figures/hare_ablations.pdf", "paper/figures/sensitivity.pdf"],
    "decomposition": ["paper/figures/decomposition.pdf"],
    "personalization": ["paper/figures/personalization.pdf"],
    "convergence": ["paper/figures/convergence.pdf"],
    "runtime": ["paper/figures/runtime.pdf"],
    "claims_matrix": ["paper/figures/claims_matrix.pdf", "paper/figures/claims_matrix_families.pdf"],
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
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} notebook-source {input:q} --out {output:q} > {log:q} 2>&1"


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
        params:
            hare=HARE,
            parameters=lambda wc, notebook=_notebook, figures=_figures: json.dumps({**NOTEBOOK_INPUTS[notebook](), "figures": figures}),
        log:
            f"results/logs/notebooks/{_notebook}.papermill.log",
        conda:
            "../envs/hare.yaml"
        shell:
            "SOURCE_DATE_EPOCH=0 {params.hare} notebook-execute {input.notebook:q} --out {output.executed:q} "
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
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} notebook-html {input:q} --out {output:q} > {log:q} 2>&1"


# Every notebook with figures is a final target (rule all reads NOTEBOOKS through final_targets()
# after every rule file is included, so this replaces the list of rules/common.smk).
NOTEBOOKS = list(NOTEBOOK_FIGURES)
