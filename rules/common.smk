import json
import shlex

from hare.experiments.grid import expand_jobs, tuning_jobs_of
from hare.theory.claims import load_register

PYTHON = shlex.quote(sys.executable)
HARE = f"PYTHONPATH={shlex.quote(SOURCE)} {PYTHON} -m hare"
JOBS = {job.stem: job for job in expand_jobs(config)}
DATASETS = sorted({job.spec["environment"]["dataset"] for job in JOBS.values() if job.spec["environment"]["dataset"]})
EXPERIMENTS = sorted({job.experiment for job in JOBS.values()})
TABLES = sorted(config["tables"])
NOTEBOOKS = ["regret_curves"]
CLAIMS = load_register(Path(workflow.basedir, "paper", "claims.yaml"))

wildcard_constraints:
    experiment="[a-z][a-z0-9_]*",
    environment="[a-z][a-z0-9_]*",
    dataset="[a-z][a-z0-9_]*",
    label="[^/]+",
    folder="runs|tuning",
    notebook="[a-z][a-z0-9_]*",
    table="[a-z][a-z0-9_]*",


def job_resources():
    """Resources of an experiment job: a GPU under configs that ask for one (paper.yaml)."""
    res = config.get("resources", {})
    return {"gpu": int(res.get("gpu_per_job", 0)), "threads": int(res.get("threads_per_job", 1))}


def run_files(experiment=None, environment=None):
    """Report run files, optionally of one experiment and environment."""
    return [
        f"results/{job.stem}.npz"
        for job in JOBS.values()
        if job.role == "report" and (experiment is None or job.experiment == experiment) and (environment is None or job.environment == environment)
    ]


def table_runs(wildcards):
    """Report runs behind a table: one experiment's, or every experiment's (``experiment: all``)."""
    experiment = config["tables"][wildcards.table]["experiment"]
    return run_files(None if experiment == "all" else experiment)


def final_targets(manifest=True):
    """What `rule all` builds; the manifest comes last and covers the others (``manifest=False`` leaves it out)."""
    targets = ["results/claims.md", *(f"results/notebooks/{nb}.html" for nb in NOTEBOOKS)]
    if config["paper"]["build_pdf"]:
        targets.append("results/paper.pdf")
    if manifest:
        targets.append("results/MANIFEST.sha256")
    return targets


def job_of(wildcards):
    return JOBS[f"{wildcards.folder}/{wildcards.experiment}/{wildcards.environment}/{wildcards.label}"]


def job_inputs(wildcards):
    """The prepared dataset of a job and, for a tuned report job, its selected hyperparameters."""
    job = job_of(wildcards)
    dataset = job.spec["environment"]["dataset"]
    return {
        "dataset": [f"results/data/prepared/{dataset}.npz"] if dataset else [],
        "selected": [f"results/{job.selection}"] if job.selection else [],
    }


def option(flag, paths):
    """``--flag 'path'`` for a one-element input list, nothing for an empty one."""
    return f"{flag} {shlex.quote(paths[0])}" if paths else ""


def tuning_runs(wildcards):
    reported = JOBS[f"runs/{wildcards.experiment}/{wildcards.environment}/{wildcards.label}"]
    return [f"results/{job.stem}.npz" for job in tuning_jobs_of(list(JOBS.values()), reported)]


def claim_inputs():
    return sorted({path for claim in CLAIMS for path in (claim.get("inputs") or {}).values()})


def figure_report(path):
    """A figure marked for the report: captioned by report/<figure>.rst, one subcategory per figure."""
    stem = Path(path).stem
    return report(path, caption=f"../report/{stem}.rst", category="Figures", subcategory=stem.replace("_", " "))
