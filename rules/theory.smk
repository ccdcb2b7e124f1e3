rule bounds_tex:
    """Every sympy-derived bound as a LaTeX macro."""
    output:
        "paper/generated/bounds.tex",
    log:
        "results/logs/theory/bounds.log",
    params:
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} bounds --out {output:q} > {log:q} 2>&1"


rule oful_check:
    """Measured LinUCB regret against the OFUL bound with the instance's constants."""
    input:
        run=lambda wc: "results/runs/{experiment}/{environment}/{policy}.npz".format(**config["theory"]["oful"]),
    output:
        json="results/checks/oful.json",
        tex="paper/generated/oful.tex",
    params:
        hare=HARE,
        delta=config["theory"]["oful"]["delta"],
    log:
        "results/logs/theory/oful.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} check-oful --run {input.run:q} --delta {params.delta} --out-json {output.json:q} --out-tex {output.tex:q} > {log:q} 2>&1"


rule decomposition:
    """pi_full, pi_W*, pi_W*,u* on the same draws: each regret term against its bound, growth exponents."""
    output:
        json="results/checks/regret_terms.json",
        tex="paper/generated/regret_terms.tex",
        npz="results/checks/regret_terms.npz",
    params:
        config=json.dumps(config["theory"]["decomposition"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/decomposition.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} decomposition --config-json {params.config:q} "
        "--out-json {output.json:q} --out-tex {output.tex:q} --out-npz {output.npz:q} > {log:q} 2>&1"


rule personalization:
    """Synthesize mode on the text environment: cross-user divergence, attention entropy, novelty, perplexity."""
    output:
        "results/checks/personalization.json",
    params:
        config=json.dumps(config["personalization"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/personalization.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 {params.hare} personalization --config-json {params.config:q} --out {output:q} > {log:q} 2>&1"
