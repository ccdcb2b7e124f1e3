rule fetch_dataset:
    """Canonical URL first (unless data.offline), then the mirror; sha256 always verified."""
    output:
        manifest="results/data/raw/{dataset}/MANIFEST.json",
    params:
        mirror=lambda wc: f"--mirror {shlex.quote(config['data']['mirror'])}" if config["data"].get("mirror") else "",
        offline="--offline" if config["data"]["offline"] else "",
        hare=HARE,
    log:
        "results/logs/data/fetch_{dataset}.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} fetch --dataset {wildcards.dataset:q} --dest results/data/raw/{wildcards.dataset:q} "
        "--manifest {output.manifest:q} {params.mirror} {params.offline} > {log:q} 2>&1"


rule prepare_dataset:
    """Classification -> bandit protocol: encoding, unit-norm rows (seed 002 §5.1)."""
    input:
        manifest="results/data/raw/{dataset}/MANIFEST.json",
    output:
        npz="results/data/prepared/{dataset}.npz",
        summary="results/data/prepared/{dataset}.json",
    log:
        "results/logs/data/prepare_{dataset}.log",
    params:
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} prepare --dataset {wildcards.dataset:q} --raw results/data/raw/{wildcards.dataset:q} "
        "--out {output.npz:q} --summary {output.summary:q} > {log:q} 2>&1"


rule prepare_dataset_reference:
    """Classification -> bandit protocol of the NeuralTS reference implementation: ordinal codes, missing -> -1, raw numbers, unit-norm rows."""
    input:
        manifest="results/data/raw/{dataset}/MANIFEST.json",
    output:
        npz="results/data/prepared_reference/{dataset}.npz",
        summary="results/data/prepared_reference/{dataset}.json",
    log:
        "results/logs/data/prepare_reference_{dataset}.log",
    params:
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} prepare --dataset {wildcards.dataset:q} --raw results/data/raw/{wildcards.dataset:q} "
        "--protocol reference --out {output.npz:q} --summary {output.summary:q} > {log:q} 2>&1"


rule skipped_datasets:
    """The optional datasets left out of this build, and why (also a LaTeX macro for the paper)."""
    output:
        json="results/data/skipped.json",
        tex="paper/generated/skipped_datasets.tex",
    params:
        skipped=json.dumps([{"dataset": s.dataset, "reason": s.reason} for s in SKIPPED_DATASETS]),
        hare=HARE,
    log:
        "results/logs/data/skipped_datasets.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} skipped-datasets --skipped-json {params.skipped:q} --out-json {output.json:q} --out-tex {output.tex:q} > {log:q} 2>&1"
