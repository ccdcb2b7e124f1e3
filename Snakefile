"""The HARE paper workflow: data -> experiments -> tables -> theory checks -> figures -> claims -> PDF.

    snakemake --cores all                                  # embedded default config (CPU, offline, minutes)
    snakemake --cores all --configfile config/smoke.yaml   # seconds
    snakemake --profile profiles/slurm --configfile config/paper.yaml
"""

import sys
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")

# The embedded default applies only when no --configfile is given: Snakemake would deep-merge
# a given file into the default, so a smaller config could never drop an experiment.
if not config:

    configfile: "config/default.yaml"


report: "report/workflow.rst"


SOURCE = str(Path(workflow.basedir) / "src")
sys.path.insert(0, SOURCE)

from hare.experiments.config import check_config

# One line per schema violation, naming its key path (not the whole schema), then the checks the schema cannot express.
check_config(config)

from hare.data.availability import drop_unavailable_optional

# Optional datasets (Covertype) this build cannot obtain leave every experiment before the job
# graph is built; the reason is printed and recorded by rule skipped_datasets.
_available_config, SKIPPED_DATASETS = drop_unavailable_optional(config)
if SKIPPED_DATASETS:
    config.clear()
    config.update(_available_config)


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/experiments.smk"
include: "rules/theory.smk"
include: "rules/theory_scaling.smk"
include: "rules/notebooks.smk"
include: "rules/paper.smk"


# Every declared output is a target: Snakemake leaves a missing file alone when its consumers are up to date.
rule all:
    input:
        final_targets(),
        declared_outputs,
    default_target: True
