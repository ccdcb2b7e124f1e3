rule run_job:
    """One (experiment, environment, policy point) with all its seeds batched; folder is runs (reported) or tuning."""
    input:
        unpack(job_inputs),
    output:
        npz="results/{folder}/{experiment}/{environment}/{label}.npz",
        sidecar="results/{folder}/{experiment}/{environment}/{label}.json",
    params:
        job=lambda wc: json.dumps(job_of(wc).spec, sort_keys=True),
        dataset=lambda wc, input: option("--dataset", input.dataset),
        selected=lambda wc, input: option("--selected", input.selected),
        hare=HARE,
    resources:
        gpu=job_resources()["gpu"],
    threads: job_resources()["threads"]
    log:
        "results/logs/{folder}/{experiment}/{environment}/{label}.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.hare} run --job {params.job:q} --out {output.npz:q} "
        "{params.dataset} {params.selected} --progress off > {log:q} 2>&1"


rule select_hyperparameters:
    """The grid point with the lowest mean total regret on the tuning runs (seeds disjoint from reported runs)."""
    input:
        tuning_runs,
    output:
        "results/selected/{experiment}/{environment}/{label}.json",
    params:
        hare=HARE,
    log:
        "results/logs/selected/{experiment}/{environment}/{label}.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} select {input:q} --out {output:q} > {log:q} 2>&1"


rule table:
    """Run files of an experiment -> one table of the paper (CSV + booktabs LaTeX), as config.tables defines it."""
    input:
        runs=table_runs,
        published=lambda wc: [config["tables"][wc.table]["published"]] if "published" in config["tables"][wc.table] else [],
    output:
        csv=report("results/tables/{table}.csv", caption="../report/tables.rst", category="Tables", subcategory="{table}"),
        tex="paper/generated/table_{table}.tex",
    params:
        kind=lambda wc: config["tables"][wc.table]["kind"],
        caption=lambda wc: config["tables"][wc.table]["caption"],
        policies=lambda wc: ",".join(config["tables"][wc.table].get("policies", [])),
        published=lambda wc, input: option("--published", input.published),
        hare=HARE,
    wildcard_constraints:
        table="|".join(TABLES),
    log:
        "results/logs/tables/{table}.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} table {input.runs:q} --kind {params.kind:q} --policies={params.policies:q} {params.published} "
        "--csv {output.csv:q} --tex {output.tex:q} --caption {params.caption:q} --label tab:{wildcards.table} > {log:q} 2>&1"
