import copy
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import yaml
from snakemake.exceptions import WorkflowError

# Nothing Snakemake records of a job (its params, input files and shell code: persistence.py, the rerun triggers
# params, input and code) names this checkout or the interpreter by an absolute path, so that a copied (cp -a) or moved
# build reruns nothing: both are found when the job runs. The rules call `hare` as HARE below: PYTHONPATH=src, relative
# to the working directory (the checkout, where every other path of the rules is relative too), and the interpreter
# that runs this Snakemake from the variable HARE_PYTHON, set here for every shell command this process (or a job's
# Snakemake, which reads this file again) starts.
SOURCE = str(Path(workflow.basedir) / "src")
HARE_ENVIRONMENT = {**os.environ, "PYTHONPATH": SOURCE}
os.environ.update(HARE_PYTHON=sys.executable)
# Relative where they can be (Snakemake makes --configfile paths absolute): the experiment rules pass them on.
CONFIG_PATHS = [os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path) for path in workflow.configfiles]


def job_table():
    """The job table of the config (``hare jobs --table``, hare.experiments.plan), read as a sample sheet: the one
    place the config is validated (one line per error, naming its key); the workflow imports nothing from src/.

    An overlay (config/smoke.yaml, paper-core.yaml, paper.yaml: ``base: default.yaml`` and what differs) is resolved
    by ``hare`` alone; Snakemake's ``config`` is the files as written, so it is compared with the files merged left to
    right unresolved; every rule reads the resolved config from the table (CONFIG below), and ``config`` is then replaced
    by it for the report's captions."""
    command = [sys.executable, "-m", "hare", "jobs", *CONFIG_PATHS, "--table", "--register", str(Path(workflow.basedir, "paper", "claims.yaml"))]
    answer = subprocess.run(command, env=HARE_ENVIRONMENT, capture_output=True, text=True)
    if answer.returncode != 0:
        raise WorkflowError(answer.stderr.strip() or f"hare jobs exited {answer.returncode}")
    if answer.stderr:
        print(answer.stderr, end="", file=sys.stderr)
    merged = {}  # as written: an overlay keeps its `base`, which Snakemake does not resolve either
    for path in CONFIG_PATHS:
        merged.update(yaml.safe_load(Path(path).read_text()) or {})
    if config != merged:
        raise WorkflowError("the config differs from its files merged left to right (--config overrides or deep merges of several "
                            "--configfile): write the values into one config file, so that the jobs read what the workflow planned")
    return json.loads(answer.stdout)


# The workflow reads its config through the table; whether an optional dataset (Covertype) can be obtained is decided
# later, by the checkpoint skipped_datasets (available()).
PLAN = job_table()
CONFIG = PLAN["config"]
# The report's captions (report/*.rst) read `snakemake.config`, which is this file's `config`: once checked against the
# files as written, it holds the resolved config, so a caption reads the values of an overlay's base as the rules do
# (an overlay as written lacks every key it inherits; tests/workflow/test_report_captions.py).
config.clear()
config.update(copy.deepcopy(CONFIG))


HARE = 'PYTHONPATH=src "$HARE_PYTHON" -m hare'
CODE = PLAN["code"]
"""The digests of the code each step runs, from the job table (hare.cli.code.workflow_code)."""


def _code_param(spec, digest):
    return json.dumps({"spec": spec, "digest": digest}, sort_keys=True, separators=(",", ":"))  # one shell word


def OUTPUTS(wildcards, output):
    """``params.outputs`` of each step that records its code, its outputs as ``hare --outputs`` takes them (a param
    derived from the outputs, which Snakemake does not compare between runs)."""
    return json.dumps([str(path) for path in output], separators=(",", ":"))


def BATCH_OUTPUTS(wildcards, output):
    """``params.outputs`` of an experiment batch: its margins and selections (each run file's sidecar records its own
    job's code)."""
    return json.dumps([str(output.margins), *map(str, output.selected)], separators=(",", ":"))


def code(command=None, notebook=None):
    """``params.code`` of each step that runs ``hare COMMAND`` (a notebook, ``notebook-execute`` on it): the code it
    runs as ``hare --record`` takes it, its code spec and its digest now (docs/workflow.md, "Code is an input").
    Snakemake records params (a string, not derived from the outputs), so an edit of that code (docstrings, comments and
    formatting aside) reruns the rule, and ``snakemake -n`` says "Params have changed since last execution"; hare
    writes the record of the code the outputs were computed with under results/code, which ``hare verify`` compares
    with the code now."""
    if notebook is not None:
        spec = {"command": "notebook-execute", "notebook": f"notebooks/{notebook}.py"}
        return _code_param(spec, CODE["notebooks"][notebook])
    return _code_param({"command": command}, CODE["commands"][command])


def batch_code(batch):
    """``params.code`` of an experiment batch: its round loop, margins and selections with its jobs' policies and
    environments (hare.cli.code); the record covers the margins and selections, each run file's sidecar its own job."""
    entry = CODE["batches"][batch]
    return _code_param(entry["spec"], entry["digest"])


JOBS = {row["stem"]: SimpleNamespace(**row) for row in PLAN["jobs"]}
TABLES = sorted(CONFIG["tables"])
OPTIONAL_DATASETS = PLAN["optional_datasets"]
NOTEBOOKS = ["regret_curves"]
CLAIMS = PLAN["claims"]
CLAIM_KEYS = {claim["key"]: claim for claim in CLAIMS}
CONFIG_FILES = " ".join(shlex.quote(path) for path in CONFIG_PATHS)

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
    res = CONFIG.get("resources", {})
    return {"gpu": int(res.get("gpu_per_job", 0)), "threads": int(res.get("threads_per_job", 1))}


def experiment_resources():
    """Site resources of the experiment batches (e.g. Slurm partition and GRES) from config ``resources.experiment_batches``."""
    return dict(CONFIG.get("resources", {}).get("experiment_batches", {}))


def available():
    """``{"stems", "tables"}`` this build runs: every job and table of the config, unless the config uses an optional
    dataset; then the checkpoint ``skipped_datasets`` decides, and the jobs and tables of a skipped one are left out."""
    if not OPTIONAL_DATASETS:
        return {"stems": set(JOBS), "tables": TABLES}
    with open(checkpoints.skipped_datasets.get().output.json) as record:
        decided = json.load(record)
    return {"stems": set(decided["stems"]), "tables": sorted(decided["tables"])}


def run_files(experiment=None, environment=None):
    """Report run files this build produces, optionally of one experiment and environment."""
    stems = available()["stems"]
    return [
        f"results/{job.stem}.npz"
        for job in JOBS.values()
        if job.role == "report" and job.stem in stems and (experiment is None or job.experiment == experiment) and (environment is None or job.environment == environment)
    ]


def lock_in_tuning_files():
    """Tuning runs of the published experiment at each alpha_0 grid point of LNUCB-TA as written and of the public
    code's reading (the JOBS table lists them; a tuning run is an output of its batch like a reported one)."""
    stems = available()["stems"]
    return [
        f"results/{job.stem}.npz"
        for job in JOBS.values()
        if job.role == "tuning" and job.experiment == "published" and job.stem in stems
        and job.label.partition("@")[0] in ("lnucb_ta", "lnucb_ta_public") and "alpha_0=" in job.label.partition("@")[2]
    ]


def table_runs(wildcards):
    """Report runs behind a table: one experiment's, a list of experiments', or every experiment's (``experiment: all``)."""
    experiment = CONFIG["tables"][wildcards.table]["experiment"]
    if isinstance(experiment, list):
        return [path for name in experiment for path in run_files(name)]
    return run_files(None if experiment == "all" else experiment)


def final_targets(manifest=True):
    """What `rule all` builds; the manifest comes last and covers the others (``manifest=False`` leaves it out)."""
    targets = ["results/claims.md", *(f"results/notebooks/{nb}.html" for nb in NOTEBOOKS)]
    if CONFIG["paper"]["build_pdf"]:
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
    missing, and everything after it. The outputs of rules without wildcards (the experiment batches with their
    selections among them) are read off the workflow; those of the wildcard rules are the inputs of those rules, the
    tables, the notebooks and the prepared datasets with their summaries and raw files.
    """
    files = set()
    stems = available()["stems"]
    for step in workflow.rules:
        if step.name in ON_DEMAND_RULES or step.has_wildcards():
            continue
        if step.name in BATCH_OF_RULE and not set(PLAN["batches"][BATCH_OF_RULE[step.name]]["jobs"]) <= stems:
            continue
        files.update(str(path) for path in step.output)
        files.update(str(path) for path in step.input if isinstance(path, str) and str(path).startswith("results/"))
    for dataset in {path for path in files if path.startswith("results/data/prepared")}:
        files.add(str(Path(dataset).with_suffix(".json")))
        files.add(f"results/data/raw/{Path(dataset).stem}/MANIFEST.json")
    for table in available()["tables"]:
        files.update([f"results/tables/{table}.csv", f"paper/generated/table_{table}.tex"])
        if CONFIG["tables"][table]["kind"] == "reproduction":
            files.add(f"paper/generated/{table}_text.tex")
    for notebook in NOTEBOOK_FIGURES:
        files.update([f"results/notebooks/{notebook}.source.ipynb", f"results/notebooks/{notebook}.html"])
    return sorted(files)


def option(flag, paths):
    """``--flag 'path'`` for a one-element input list, nothing for an empty one."""
    return f"{flag} {shlex.quote(paths[0])}" if paths else ""


def claim_inputs(key=None):
    """Inputs of the claims register (of one claim with ``key``) this configuration produces. Run files are produced
    when a report job writes them; a claim on a run file the configuration does not produce is NOT RUN and needs
    nothing built. Other inputs (checks, benchmarks) come from rules every configuration has."""
    reported = set(run_files())
    claims = CLAIMS if key is None else [CLAIM_KEYS[key]] if key in CLAIM_KEYS else []
    needed = set()
    for claim in claims:
        paths = list((claim.get("inputs") or {}).values())
        runs = [p for p in paths if p.startswith("results/runs/")]
        if any(str(Path(p).with_suffix(".npz")) not in reported for p in runs):
            # NOT RUN: the configuration does not produce its run files; its margins need nothing built either
            needed.update(p for p in paths if not p.startswith(("results/runs/", "results/checks/margins/")))
            continue
        needed.update(paths)
    return sorted(needed)


def figure_report(path):
    """A figure marked for the report: captioned by report/<figure>.rst, one subcategory per figure."""
    stem = Path(path).stem
    return report(path, caption=f"../report/{stem}.rst", category="Figures", subcategory=stem.replace("_", " "))
