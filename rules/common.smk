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
CLAIMS = load_register(Path(workflow.basedir, "paper", "claims.yaml"), [config])
CLAIM_KEYS = {claim["key"]: claim for claim in CLAIMS}
CONFIG_FILES = " ".join(shlex.quote(str(p)) for p in workflow.configfiles)

wildcard_constraints:
    experiment="[a-z][a-z0-9_]*",
    environment="[a-z][a-z0-9_]*",
    dataset="[a-z][a-z0-9_]*",
    label="[^/]+",
    folder="runs|tuning",
    notebook="[a-z][a-z0-9_]*",
    table="[a-z][a-z0-9_]*",
    key="[a-z0-9_]+",


def job_resources():
    """Resources of an experiment job: a GPU under configs that ask for one (paper.yaml)."""
    res = config.get("resources", {})
    return {"gpu": int(res.get("gpu_per_job", 0)), "threads": int(res.get("threads_per_job", 1))}


def experiment_resources():
    """Site resources of the experiment batches (e.g. Slurm partition and GRES) from config ``resources.experiment_batches``."""
    return dict(config.get("resources", {}).get("experiment_batches", {}))


def run_files(experiment=None, environment=None):
    """Report run files, optionally of one experiment and environment."""
    return [
        f"results/{job.stem}.npz"
        for job in JOBS.values()
        if job.role == "report" and (experiment is None or job.experiment == experiment) and (environment is None or job.environment == environment)
    ]


def table_runs(wildcards):
    """Report runs behind a table: one experiment's, a list of experiments', or every experiment's (``experiment: all``)."""
    experiment = config["tables"][wildcards.table]["experiment"]
    if isinstance(experiment, list):
        return [path for name in experiment for path in run_files(name)]
    return run_files(None if experiment == "all" else experiment)


def final_targets(manifest=True):
    """What `rule all` builds; the manifest comes last and covers the others (``manifest=False`` leaves it out)."""
    targets = ["results/claims.md", *(f"results/notebooks/{nb}.html" for nb in NOTEBOOKS)]
    if config["paper"]["build_pdf"]:
        targets.append("results/paper.pdf")
    if manifest:
        targets.append("results/MANIFEST.sha256")
    return targets


ON_DEMAND_RULES = ("all", "manifest", "claim")
"""Rules whose outputs are not inputs of the manifest: the targets themselves and the one-claim rule of `make claim`."""


def declared_outputs(wildcards=None):
    """Every file this workflow declares as an output for this config (targets of ``all`` and inputs of the manifest).

    Snakemake does not rebuild a missing file whose consumers are up to date (it treats it as a spent
    intermediate), not even one the up-to-date manifest lists as an input; a deleted table, figure or macro file
    would stay missing after a run that reports success. As a target, every declared output is rebuilt when
    missing, and everything after it. The
    outputs of rules without wildcards are read off the workflow; those of the wildcard rules are the inputs of
    those rules, the tables, the notebooks, the selections of tuned jobs and the prepared datasets with their
    summaries and raw files.
    """
    files = set()
    for step in workflow.rules:
        if step.name in ON_DEMAND_RULES or step.has_wildcards():
            continue
        files.update(str(path) for path in step.output)
        files.update(str(path) for path in step.input if isinstance(path, str) and str(path).startswith("results/"))
    for job in JOBS.values():
        if job.selection:
            files.add(f"results/{job.selection}")
    for dataset in {path for path in files if path.startswith("results/data/prepared")}:
        files.add(str(Path(dataset).with_suffix(".json")))
        files.add(f"results/data/raw/{Path(dataset).stem}/MANIFEST.json")
    for table in TABLES:
        files.update([f"results/tables/{table}.csv", f"paper/generated/table_{table}.tex"])
    for notebook in NOTEBOOK_FIGURES:
        files.update([f"results/notebooks/{notebook}.source.ipynb", f"results/notebooks/{notebook}.html"])
    return sorted(files)


def batches():
    """Jobs grouped into batches, one per (folder, experiment, environment): ``{(folder, experiment, environment): [job, ...]}``.

    A batch runs in one process (``hare run-batch``), so the interpreter and torch start once per
    batch instead of once per job; every job still writes its own result and sidecar.
    """
    grouped = {}
    for job in JOBS.values():
        folder = job.stem.split("/", 1)[0]
        grouped.setdefault((folder, job.experiment, job.environment), []).append(job)
    return {key: sorted(jobs, key=lambda j: j.label) for key, jobs in sorted(grouped.items())}


def batch_entries(jobs):
    """The ``--jobs`` JSON of ``hare run-batch`` for ``jobs``."""
    return json.dumps(
        [{"job": job.spec, "out": f"results/{job.stem}.npz", "selected": f"results/{job.selection}" if job.selection else None} for job in jobs],
        sort_keys=True,
    )


def option(flag, paths):
    """``--flag 'path'`` for a one-element input list, nothing for an empty one."""
    return f"{flag} {shlex.quote(paths[0])}" if paths else ""


def tuning_runs(wildcards):
    reported = JOBS[f"runs/{wildcards.experiment}/{wildcards.environment}/{wildcards.label}"]
    return [f"results/{job.stem}.npz" for job in tuning_jobs_of(list(JOBS.values()), reported)]


def claim_inputs(key=None):
    """Inputs of the claims register (of one claim with ``key``) this configuration produces. Run files are produced
    when a report job writes them; a claim on a run file the configuration does not produce is NOT RUN and needs
    nothing built. Other inputs (checks, benchmarks) come from rules every configuration has."""
    reported = set(run_files())
    claims = CLAIMS if key is None else [CLAIM_KEYS[key]] if key in CLAIM_KEYS else []
    paths = {path for claim in claims for path in (claim.get("inputs") or {}).values()}
    return sorted(p for p in paths if not p.startswith("results/runs/") or str(Path(p).with_suffix(".npz")) in reported)


def figure_report(path):
    """A figure marked for the report: captioned by report/<figure>.rst, one subcategory per figure."""
    stem = Path(path).stem
    return report(path, caption=f"../report/{stem}.rst", category="Figures", subcategory=stem.replace("_", " "))
