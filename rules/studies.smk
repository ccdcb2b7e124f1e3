rule pool_scaling:
    """Seed 000's third open question: HARE's select and update latency and memory against the pool size N, per
    cluster-count rule and covariance kind (full, diagonal, low-rank), the per-item covariance as a cost line, and the
    regret each kind costs on HARE-Sim."""
    output:
        json="results/checks/pool_scaling.json",
        tex="paper/generated/pool_scaling.tex",
    params:
        code=code("pool-scaling"),
        outputs=OUTPUTS,
        config=lambda wc: json.dumps(CONFIG["pool_scaling"], sort_keys=True),
        hare=HARE,
    threads: workflow.cores  # alone on the machine: timings are not shared with concurrent jobs
    log:
        "results/logs/studies/pool_scaling.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} pool-scaling --config-json {params.config:q} "
        "--out-json {output.json:q} --out-tex {output.tex:q} > {log:q} 2>&1"
