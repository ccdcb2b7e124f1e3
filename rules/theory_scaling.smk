rule approx_budget:
    """Seed 001 term 1: R_approx = R(pi_full) - R(pi_W*) at a fixed horizon against the logged budget M, its exponent in M."""
    output:
        json="results/checks/approx_budget.json",
        tex="paper/generated/approx_budget.tex",
    params:
        code=code("approx-budget"),
        outputs=OUTPUTS,
        config=lambda wc: json.dumps(CONFIG["theory"]["approx_budget"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/approx_budget.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} approx-budget --config-json {params.config:q} "
        "--out-json {output.json:q} --out-tex {output.tex:q} > {log:q} 2>&1"


rule heads_alpha:
    """Seed 000 Theorem: HARE's regret over heads H and bonus weights alpha on paired runs, its exponents in H and 1 + alpha^2/d_k."""
    output:
        json="results/checks/heads_alpha.json",
        tex="paper/generated/heads_alpha.tex",
    params:
        code=code("heads-alpha"),
        outputs=OUTPUTS,
        config=lambda wc: json.dumps(CONFIG["theory"]["heads_alpha"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/heads_alpha.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} heads-alpha --config-json {params.config:q} "
        "--out-json {output.json:q} --out-tex {output.tex:q} > {log:q} 2>&1"
