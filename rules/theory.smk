rule bounds_tex:
    """Every sympy-derived bound as a LaTeX macro."""
    output:
        "paper/generated/bounds.tex",
    log:
        "results/logs/theory/bounds.log",
    params:
        code=code("bounds"),
        outputs=OUTPUTS,
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} bounds --out {output:q} > {log:q} 2>&1"


rule oful_check:
    """Measured LinUCB regret against the OFUL bound with the instance's constants; the bound's premise
    (theta* inside the confidence ellipsoid) on a re-simulation of the same run from its sidecar."""
    input:
        run=lambda wc: "results/runs/{experiment}/{environment}/{policy}.npz".format(**CONFIG["theory"]["oful"]),
        sidecar=lambda wc: "results/runs/{experiment}/{environment}/{policy}.json".format(**CONFIG["theory"]["oful"]),
    output:
        json="results/checks/oful.json",
        tex="paper/generated/oful.tex",
    params:
        code=code("check-oful"),
        outputs=OUTPUTS,
        hare=HARE,
        delta=CONFIG["theory"]["oful"]["delta"],
    log:
        "results/logs/theory/oful.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} check-oful --run {input.run:q} --delta {params.delta} --out-json {output.json:q} --out-tex {output.tex:q} > {log:q} 2>&1"


rule decomposition:
    """pi_full, pi_W*, pi_W*,u* on the same draws: each regret term against its bound, growth exponents."""
    output:
        json="results/checks/regret_terms.json",
        tex="paper/generated/regret_terms.tex",
        npz="results/checks/regret_terms.npz",
    params:
        code=code("decomposition"),
        outputs=OUTPUTS,
        config=json.dumps(CONFIG["theory"]["decomposition"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/decomposition.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} decomposition --config-json {params.config:q} "
        "--out-json {output.json:q} --out-tex {output.tex:q} --out-npz {output.npz:q} > {log:q} 2>&1"


rule decomposition_grid:
    """The decomposition for every (C, d_k) of the grid: each term at the largest T against its bound, growth exponents."""
    output:
        json="results/checks/regret_terms_grid.json",
        tex="paper/generated/regret_terms_grid.tex",
    params:
        code=code("decomposition-grid"),
        outputs=OUTPUTS,
        config=json.dumps(CONFIG["theory"]["decomposition_grid"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/decomposition_grid.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} decomposition-grid --config-json {params.config:q} "
        "--out-json {output.json:q} --out-tex {output.tex:q} > {log:q} 2>&1"


rule convergence:
    """Do Sigma and the attention, updated online together, converge? Cluster-choice stability on fixed probes and the local regret slope."""
    output:
        json="results/checks/convergence.json",
        tex="paper/generated/convergence.tex",
        npz="results/checks/convergence.npz",
    params:
        code=code("convergence"),
        outputs=OUTPUTS,
        config=lambda wc: json.dumps(CONFIG["theory"]["convergence"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/convergence.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} convergence --config-json {params.config:q} "
        "--out-json {output.json:q} --out-tex {output.tex:q} --out-npz {output.npz:q} > {log:q} 2>&1"


rule personalization:
    """Synthesize mode on the text environment: cross-user similarity (random at std 0.02 vs learned, over runs), attention
    entropy, novelty, held-out perplexity against a trained unconditioned decoder of the same size and budget."""
    output:
        "results/checks/personalization.json",
    params:
        code=code("personalization"),
        outputs=OUTPUTS,
        config=json.dumps(CONFIG["personalization"], sort_keys=True),
        hare=HARE,
    log:
        "results/logs/theory/personalization.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} personalization --config-json {params.config:q} --out {output:q} > {log:q} 2>&1"


rule bench_policies:
    """Batched LinUCB against its memory-bandwidth ceiling and peer libraries, every policy's batching gain, NeuralUCB's exploration modes: ratios timed in one run."""
    input:
        datasets=lambda wc: [f"results/data/prepared/{d}.npz" for d in CONFIG["bench"]["datasets"]],
        comparison=lambda wc: [f"results/data/prepared/{d}.npz" for d in CONFIG["bench"].get("comparison_datasets", [])],
    output:
        json="results/bench/policies.json",
        tex=report("paper/generated/table_bench.tex", caption="../report/bench.rst", category="Tables", subcategory="benchmarks"),
        tex_neural=report("paper/generated/table_bench_neural.tex", caption="../report/bench.rst", category="Tables", subcategory="benchmarks"),
    params:
        code=code("bench"),
        outputs=OUTPUTS,
        datasets=lambda wc, input: " ".join(f"--dataset {shlex.quote(f'{d}={p}')}" for d, p in zip(CONFIG["bench"]["datasets"], input.datasets))
        + "".join(f" --comparison-dataset {shlex.quote(f'{d}={p}')}" for d, p in zip(CONFIG["bench"].get("comparison_datasets", []), input.comparison)),
        settings=lambda wc: " ".join(shlex.quote(str(a)) for a in ["--horizon", CONFIG["bench"]["horizon"], "--max-seconds", CONFIG["bench"]["max_seconds"], "--neural-rounds", CONFIG["bench"]["neural_rounds"], "--comparison-repeats", CONFIG["bench"].get("comparison_repeats", 5), "--neural-repeats", CONFIG["bench"].get("neural_repeats", 3), "--batch-sizes", *CONFIG["bench"]["batch_sizes"], *(["--policies", *CONFIG["bench"]["policies"]] if CONFIG["bench"].get("policies") else [])]),
        hare=HARE,
    threads: workflow.cores  # alone on the machine: timings are not shared with concurrent jobs
    log:
        "results/logs/bench/policies.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} bench --out {output.json:q} --tex {output.tex:q} --tex-neural {output.tex_neural:q} "
        "--threads 1 {params.datasets} {params.settings} > {log:q} 2>&1"


rule bench_baselines:
    """The neural and kernel bandits against their dense references: one training and one round of each, timed in turn, as ratios."""
    input:
        datasets=lambda wc: [f"results/data/prepared/{d}.npz" for d in CONFIG["bench"]["baselines"]["datasets"]],
    output:
        json="results/bench/baselines.json",
        tex=report("paper/generated/table_bench_baselines.tex", caption="../report/bench.rst", category="Tables", subcategory="benchmarks"),
    params:
        code=code("bench-baselines"),
        outputs=OUTPUTS,
        datasets=lambda wc, input: " ".join(f"--dataset {shlex.quote(f'{d}={p}')}" for d, p in zip(CONFIG["bench"]["baselines"]["datasets"], input.datasets)),
        settings=lambda wc: " ".join(shlex.quote(str(a)) for flag, key in (("--runs", "n_runs"), ("--width", "width"), ("--train-steps", "train_steps"), ("--batch-size", "batch_size"), ("--networks", "n_networks"), ("--max-points", "max_points"), ("--history", "history"), ("--rounds", "rounds"), ("--repeats", "repeats"), ("--max-seconds", "max_seconds")) if key in CONFIG["bench"]["baselines"] for a in (flag, CONFIG["bench"]["baselines"][key])),
        hare=HARE,
    threads: workflow.cores  # alone on the machine: timings are not shared with concurrent jobs
    log:
        "results/logs/bench/baselines.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} bench-baselines --out {output.json:q} --tex {output.tex:q} --threads 1 {params.datasets} {params.settings} > {log:q} 2>&1"


rule bench_hare:
    """HARE select-mode latency and state memory against N, C, H and d_k."""
    output:
        json="results/bench/hare.json",
        tex=report("paper/generated/table_bench_hare.tex", caption="../report/bench.rst", category="Tables", subcategory="benchmarks"),
    params:
        code=code("bench-hare"),
        outputs=OUTPUTS,
        settings=lambda wc: " ".join(shlex.quote(str(a)) for a in ["--rounds", CONFIG["bench"]["hare_rounds"], "--max-items", CONFIG["bench"]["hare_max_items"], "--quick"]),
        hare=HARE,
    threads: workflow.cores  # alone on the machine: timings are not shared with concurrent jobs
    log:
        "results/logs/bench/hare.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "OMP_NUM_THREADS=1 {params.hare} --record {params.code:q} --outputs {params.outputs:q} bench-hare --out {output.json:q} --tex {output.tex:q} {params.settings} > {log:q} 2>&1"
