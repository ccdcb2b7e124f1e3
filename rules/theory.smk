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
