rule fetch_dataset:
    """Canonical URL first (unless data.offline), then the mirror; sha256 always verified."""
    output:
        manifest="results/data/raw/{dataset}/MANIFEST.json",
    params:
        code=code("fetch"),
        outputs=lambda wildcards, output: json.dumps([str(output.manifest), f"results/data/raw/{wildcards.dataset}/"], separators=(",", ":")),
        mirror=lambda wc: f"--mirror {shlex.quote(CONFIG['data']['mirror'])}" if CONFIG["data"].get("mirror") else "",
        offline="--offline" if CONFIG["data"]["offline"] else "",
        hare=HARE,
    log:
        "results/logs/data/fetch_{dataset}.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} fetch --dataset {wildcards.dataset:q} --dest results/data/raw/{wildcards.dataset:q} "
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
        code=code("prepare"),
        outputs=OUTPUTS,
        hare=HARE,
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} prepare --dataset {wildcards.dataset:q} --raw results/data/raw/{wildcards.dataset:q} "
        "--out {output.npz:q} --summary {output.summary:q} > {log:q} 2>&1"


rule prepare_dataset_reference:
    """Classification -> bandit protocol on the reference's rows (NeuralTS reference implementation): the reference
    preparation (ordinal codes, missing -> -1, raw numbers) or one of its departures (one-hot nominal attributes,
    standardised or min-max scaled numeric ones; hare.data.prepare.PREPARATIONS), unit-norm rows. The file's folder
    names the preparation, so a job reads the file of its environment's preparation and its specification (the batch
    digest) names it too."""
    input:
        manifest="results/data/raw/{dataset}/MANIFEST.json",
    output:
        npz="results/data/prepared_{preparation}/{dataset}.npz",
        summary="results/data/prepared_{preparation}/{dataset}.json",
    log:
        "results/logs/data/prepare_{preparation}_{dataset}.log",
    params:
        code=code("prepare"),
        outputs=OUTPUTS,
        hare=HARE,
    wildcard_constraints:
        preparation="reference|onehot|standardised|minmax|onehot_standardised|onehot_minmax",
        dataset="[a-z_]+",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} prepare --dataset {wildcards.dataset:q} --raw results/data/raw/{wildcards.dataset:q} "
        "--protocol {wildcards.preparation:q} --out {output.npz:q} --summary {output.summary:q} > {log:q} 2>&1"


checkpoint skipped_datasets:
    """The optional datasets (Covertype) this build cannot obtain, and why, with the jobs and tables that remain (also a
    LaTeX macro for the paper). A checkpoint: the decision, which may probe the network, is a job, not part of parsing;
    the workflow reads it (``available()``) only when the config uses an optional dataset. Delete its JSON to decide
    again."""
    output:
        json="results/data/skipped.json",
        tex="paper/generated/skipped_datasets.tex",
    params:
        code=code("skipped-datasets"),
        outputs=OUTPUTS,
        configs=CONFIG_FILES,
        hare=HARE,
    log:
        "results/logs/data/skipped_datasets.log",
    conda:
        "../envs/hare.yaml"
    shell:
        "{params.hare} --record {params.code:q} --outputs {params.outputs:q} skipped-datasets --config {params.configs} --out-json {output.json:q} --out-tex {output.tex:q} 2>&1 | tee {log:q}"
