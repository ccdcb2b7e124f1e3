# How every policy's cost grows (issue 30, item 4; paper, sec:cost-growth): the cost_growth section of the config.


rule cost_growth:
    """Seconds per round of one policy per family along one-factor sweeps of the round t, the arms K, the dimension d and
    the runs B (hare.experiments.studies.cost_growth); fitted growth exponents, the paper's table and macros."""
    output:
        json="results/checks/cost_growth.json",
        tex="paper/generated/cost_growth.tex",
    params:
        code=code("cost-growth"),
        outputs=OUTPUTS,
        config=lambda wc: json.dumps(CONFIG["cost_growth"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/cost_growth.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} cost-growth --config-json {params.config:q} "
        "--out-json {output.json:q} --out-tex {output.tex:q} > {log:q} 2>&1"
