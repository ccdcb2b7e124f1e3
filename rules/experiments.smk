# One rule per batch (experiment, environment): its jobs run in one process, the tuning jobs first, and each writes
# its own <label>.npz and .json under results/tuning/ or results/runs/; before a tuned report job plays, the batch
# writes its selection (results/selected/..., the grid point of lowest mean total regret on its tuning runs, seeds
# disjoint from the reported ones); after its jobs, it writes its equivalence margin from its tuning runs only
# (results/checks/margins/<experiment>/<environment>.json, hare.experiments.margins). The rules are named run_<experiment>_<environment>; the Slurm profile gives them
# their site resources through config `resources` (see profiles/slurm/config.yaml). Snakemake's benchmark file beside
# each batch's log records the batch process's wall and CPU seconds (what the cost model predicts, docs/cost_model.md).
BATCH_OF_RULE = {}
"""``{rule name: batch}`` of the experiment rules."""

for _batch, _planned in PLAN["batches"].items():
    _experiment, _environment = _batch.split("/")
    BATCH_OF_RULE[f"run_{_experiment}_{_environment}"] = _batch
    _jobs = [JOBS[stem] for stem in _planned["jobs"]]
    _dataset = _planned["dataset"]

    rule:
        name:
            f"run_{_experiment}_{_environment}"
        input:
            dataset=[f"results/{_dataset}"] if _dataset else [],
        output:
            npz=[f"results/{job.stem}.npz" for job in _jobs],
            sidecar=[f"results/{job.stem}.json" for job in _jobs],
            selected=[f"results/{job.selection}" for job in _jobs if job.selection],
            margins=f"results/checks/margins/{_experiment}/{_environment}.json",
        params:
            code=batch_code(_batch),
            outputs=BATCH_OUTPUTS,
            batch=_batch,
            digest=_planned["digest"],
            configs=CONFIG_FILES,
            hare=HARE,
        resources:
            gpu=job_resources()["gpu"],
            **experiment_resources(),
        threads: job_resources()["threads"]
        log:
            f"results/logs/experiments/{_experiment}/{_environment}.log",
        benchmark:
            f"results/logs/experiments/{_experiment}/{_environment}.benchmark.tsv"
        conda:
            "../envs/hare.yaml"
        shell:
            "OMP_NUM_THREADS={threads} {params.hare} --record {params.code:q} --outputs {params.outputs:q} run-batch --config {params.configs} --batch {params.batch:q} --digest {params.digest:q} --progress off --margins {output.margins:q} > {log:q} 2>&1"


rule table:
    """Run files of an experiment -> one table of the paper (CSV + booktabs LaTeX), as config.tables defines it; a table
    of kind reproduction is the rule table_reproduction below, the same with its generated paragraphs as a third output."""
    input:
        runs=table_runs,
        published=lambda wc: [CONFIG["tables"][wc.table]["published"]] if "published" in CONFIG["tables"][wc.table] else [],
    output:
        csv=report("results/tables/{table}.csv", caption="../report/tables.rst", category="Tables", subcategory="{table}"),
        tex="paper/generated/table_{table}.tex",
    params:
        code=code("table"),
        outputs=OUTPUTS,
        kind=lambda wc: CONFIG["tables"][wc.table]["kind"],
        caption=lambda wc: CONFIG["tables"][wc.table]["caption"],
        policies=lambda wc: ",".join(CONFIG["tables"][wc.table].get("policies", [])),
        published=lambda wc, input: option("--published", input.published),
        text="",
        hare=HARE,
    wildcard_constraints:
        table="|".join(t for t in TABLES if CONFIG["tables"][t]["kind"] != "reproduction") or "(?!)",
    log:
        "results/logs/tables/{table}.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} table {input.runs:q} --kind {params.kind:q} --policies={params.policies:q} {params.published} {params.text} "
        "--csv {output.csv:q} --tex {output.tex:q} --caption {params.caption:q} --label tab:{wildcards.table} > {log:q} 2>&1"


use rule table as table_reproduction with:
    output:
        csv=report("results/tables/{table}.csv", caption="../report/tables.rst", category="Tables", subcategory="{table}"),
        tex="paper/generated/table_{table}.tex",
        text="paper/generated/{table}_text.tex",
    params:
        text=lambda wc, output: option("--text", [output.text]),
    wildcard_constraints:
        table="|".join(t for t in TABLES if CONFIG["tables"][t]["kind"] == "reproduction") or "(?!)",
