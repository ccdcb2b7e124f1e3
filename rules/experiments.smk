rule run_job:
    """One (experiment, environment, policy point) with all its seeds batched."""
    input:
        dataset=job_dataset,
    output:
        npz="results/runs/{experiment}/{environment}/{label}.npz",
        sidecar="results/runs/{experiment}/{environment}/{label}.json",
    params:
        job=lambda wc: json.dumps(job_of(wc).spec, sort_keys=True),
        dataset=lambda wc, input: f"--dataset {shlex.quote(input.dataset[0])}" if input.dataset else "",
        hare=HARE,
    resources:
        gpu=job_resources()["gpu"],
    threads: job_resources()["threads"]
    log:
        "results/logs/runs/{experiment}/{environment}/{label}.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS={threads} {params.hare} run --job {params.job:q} --out {output.npz:q} {params.dataset} --progress off > {log:q} 2>&1"


rule regret_table:
    """Runs of one experiment -> mean ± std of total regret (CSV + booktabs LaTeX)."""
    input:
        lambda wc: run_files(wc.experiment),
    output:
        csv="results/tables/{experiment}.csv",
        tex="paper/generated/table_{experiment}.tex",
    params:
        hare=HARE,
        caption=lambda wc: f"Total pseudo-regret of every policy ({wc.experiment.replace('_', ' ')} experiment).",
    log:
        "results/logs/tables/{experiment}.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} aggregate {input:q} --csv {output.csv:q} --tex {output.tex:q} "
        "--caption {params.caption:q} --label tab:{wildcards.experiment} > {log:q} 2>&1"
