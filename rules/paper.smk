rule claims:
    """Evaluate every claim of paper/claims.yaml on its 95% interval, adjusted within families; failures are reported, not fatal. Each headline verdict that the paper-core build (paper/scale_agreement.json, hare compare-claims) decides otherwise is marked, with both readings under the headline table."""
    input:
        register="paper/claims.yaml",
        scale="paper/scale_agreement.json",
        data=lambda wc: claim_inputs(),
    output:
        markdown=report("results/claims.md", caption="../report/claims.rst", category="Claims"),
        json="results/claims.json",
        tex="paper/generated/claims.tex",
    log:
        "results/logs/paper/claims.log",
    params:
        code=code("claims"),
        outputs=OUTPUTS,
        hare=HARE,
        configs=CONFIG_FILES,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} claims --register {input.register:q} --root . --config {params.configs} --markdown {output.markdown:q} --json {output.json:q} --tex {output.tex:q} --scale-reference {input.scale:q} 2>&1 | tee {log:q}"


rule claim:
    """One claim alone (`make claim KEY=<key>`): builds only that claim's inputs and prints its verdict with the interval."""
    input:
        register="paper/claims.yaml",
        data=lambda wc: claim_inputs(wc.key),
    output:
        "results/claims/{key}.md",
    log:
        "results/logs/paper/claim_{key}.log",
    params:
        code=code("claims"),
        outputs=OUTPUTS,
        hare=HARE,
        configs=CONFIG_FILES,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} claims --register {input.register:q} --root . --config {params.configs} --key {wildcards.key:q} --markdown {output:q} 2>&1 | tee {log:q}"


rule paper_macros:
    """Numbers the prose quotes (run counts, horizons, versions), from the job sidecars."""
    input:
        runs=lambda wc: run_files(),
    output:
        "paper/generated/macros.tex",
    log:
        "results/logs/paper/macros.log",
    params:
        code=code("macros"),
        outputs=OUTPUTS,
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} macros {input.runs:q} --out {output:q} > {log:q} 2>&1"


rule notation:
    """The notation table of the appendix: every symbol with its meaning (hare.notation); the whole glossary, with each
    symbol's config field, code identifier and result key, as the report's notation page."""
    output:
        tex="paper/generated/notation.tex",
        markdown=report("results/notation.md", caption="../report/notation.rst", category="Notation"),
    log:
        "results/logs/paper/notation.log",
    params:
        code=code("notation"),
        outputs=OUTPUTS,
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} notation --out {output.tex:q} --markdown {output.markdown:q} > {log:q} 2>&1"


rule code_state:
    """The code state the reproducibility appendix prints: commit, whether the tree was dirty, the digest of every
    module (docstrings and comments aside); rebuilt when any module's code changes."""
    output:
        "paper/generated/code_state.tex",
    log:
        "results/logs/paper/code_state.log",
    params:
        code=_code_param({"package": True}, CODE["package"]),
        outputs=OUTPUTS,
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} code-state --out {output:q} > {log:q} 2>&1"


rule paper_pdf:
    """latexmk; undefined references or citations, an overfull box, more pages than paper.max_pages or a body (sections
    1-6, up to \\label{body:end}) ending after page paper.max_body_pages fail the build."""
    input:
        main="paper/main.tex",
        sections=sorted(f"paper/sections/{p.name}" for p in Path(workflow.basedir, "paper", "sections").glob("*.tex")),  # relative: Snakemake records input paths
        bib="paper/refs.bib",
        generated=lambda wc: [
            "paper/generated/bounds.tex",
            "paper/generated/oful.tex",
            "paper/generated/regret_terms.tex",
            "paper/generated/regret_terms_grid.tex",
            "paper/generated/approx_budget.tex",
            "paper/generated/heads_alpha.tex",
            "paper/generated/convergence.tex",
            "paper/generated/cost_growth.tex",
            "paper/generated/pool_scaling.tex",
            "paper/generated/table_bench.tex",
            "paper/generated/table_bench_neural.tex",
            "paper/generated/table_bench_hare.tex",
            "paper/generated/table_bench_baselines.tex",
            "paper/generated/claims.tex",
            "paper/generated/macros.tex",
            "paper/generated/skipped_datasets.tex",
            "paper/generated/notation.tex",
            "paper/generated/code_state.tex",
            *(f"paper/generated/table_{t}.tex" for t in available()["tables"]),
            *(f"paper/generated/{t}_text.tex" for t in available()["tables"] if CONFIG["tables"][t]["kind"] == "reproduction"),
            *(path for outputs in NOTEBOOK_OUTPUTS.values() for path in outputs.values() if path.startswith("paper/generated/")),
        ],
        figures=[f for figures in NOTEBOOK_FIGURES.values() for f in figures],
    output:
        "results/paper.pdf",
    log:
        "results/logs/paper/latexmk.log",
    params:
        code=code("build-paper"),
        outputs=OUTPUTS,
        hare=HARE,
        max_pages=CONFIG["paper"]["max_pages"],
        max_body_pages=CONFIG["paper"]["max_body_pages"],
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} build-paper --main {input.main:q} --outdir results/latex --pdf {output:q} "
        "--max-pages {params.max_pages:q} --max-body-pages {params.max_body_pages:q} > {log:q} 2>&1"


rule manifest:
    """sha256 of every result file and every generated paper file (paper/generated, paper/figures: entries ../paper/...,
    inputs through declared_outputs, so a rebuilt table or figure rewrites it), once everything else is built; `hare verify`
    checks it later."""
    input:
        final_targets(manifest=False),
        declared_outputs,
    output:
        "results/MANIFEST.sha256",
    log:
        "results/logs/paper/manifest.log",
    params:
        code=code("manifest"),
        outputs=OUTPUTS,
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} manifest --results results > {log:q} 2>&1"
