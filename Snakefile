"""The HARE paper workflow: data -> experiments -> tables -> theory checks -> figures -> claims -> PDF.

    snakemake --cores all                                  # embedded default config (CPU, offline, minutes)
    snakemake --cores all --configfile config/smoke.yaml   # seconds
    snakemake --profile profiles/slurm --configfile config/paper.yaml

The workflow calls the `hare` command line and reads the config's job table (`hare jobs CONFIG --table`,
rules/common.smk); it imports nothing from src/.
"""

from snakemake.utils import min_version

min_version("9.0")

# The embedded default applies only when no --configfile is given: Snakemake would deep-merge
# a given file into the default, so a smaller config could never drop an experiment.
if not config:

    configfile: "config/default.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/experiments.smk"
include: "rules/theory.smk"
include: "rules/theory_scaling.smk"
include: "rules/cost.smk"
include: "rules/studies.smk"
include: "rules/notebooks.smk"
include: "rules/paper.smk"


# Every declared output is a target: Snakemake leaves a missing file alone when its consumers are up to date.
rule all:
    input:
        final_targets(),
        declared_outputs,
    default_target: True
