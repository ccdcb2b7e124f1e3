import json
import shlex

import yaml

from hare.experiments.grid import expand_jobs

PYTHON = shlex.quote(sys.executable)
HARE = f"PYTHONPATH={shlex.quote(SOURCE)} {PYTHON} -m hare"
JOBS = {job.stem: job for job in expand_jobs(config)}
DATASETS = sorted({job.spec["environment"]["dataset"] for job in JOBS.values() if job.spec["environment"]["dataset"]})
EXPERIMENTS = sorted({job.experiment for job in JOBS.values()})
NOTEBOOKS = ["regret_curves"]
CLAIMS = yaml.safe_load(Path(workflow.basedir, "paper", "claims.yaml").read_text())["claims"]

wildcard_constraints:
    experiment="[a-z][a-z0-9_]*",
    environment="[a-z][a-z0-9_]*",
    dataset="[a-z][a-z0-9_]*",
    label="[^/]+",
    notebook="[a-z][a-z0-9_]*",


def job_resources():
    """Resources of an experiment job: a GPU under configs that ask for one (paper.yaml)."""
    res = config.get("resources", {})
    return {"gpu": int(res.get("gpu_per_job", 0)), "threads": int(res.get("threads_per_job", 1))}


def run_files(experiment=None, environment=None):
    return [
        f"results/{job.stem}.npz"
        for job in JOBS.values()
        if (experiment is None or job.experiment == experiment) and (environment is None or job.environment == environment)
    ]


def final_targets(manifest=True):
    """What `rule all` builds; the manifest comes last and covers the others (``manifest=False`` leaves it out)."""
    targets = ["results/claims.md", *(f"results/notebooks/{nb}.html" for nb in NOTEBOOKS)]
    if config["paper"]["build_pdf"]:
        targets.append("results/paper.pdf")
    if manifest:
        targets.append("results/MANIFEST.sha256")
    return targets


def job_of(wildcards):
    return JOBS[f"runs/{wildcards.experiment}/{wildcards.environment}/{wildcards.label}"]


def job_dataset(wildcards):
    dataset = job_of(wildcards).spec["environment"]["dataset"]
    return [f"results/data/prepared/{dataset}.npz"] if dataset else []


def claim_inputs():
    return sorted({path for claim in CLAIMS for path in (claim.get("inputs") or {}).values()})
