# The two commands of the README:
#   make all    set everything up, run the whole workflow on the embedded default config, write the
#               HTML report, print the claims
#   make test   set everything up (Slurm too, for the Slurm workflow test), run the test suite
# Variables: PYTHON (interpreter for the venv), CONFIG, CORES, TORCH_INDEX (an index of CUDA torch wheels: torch alone is
# installed from it first, then everything else with pip's defaults; see README).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
CONFIG ?= config/default.yaml
CORES ?= all
SHELL := /bin/bash
TORCH_INDEX ?=
TEX_PACKAGES := latexmk texlive-latex-recommended texlive-latex-extra texlive-science lmodern cm-super-minimal dvipng poppler-utils
STAMP := $(VENV)/.installed
# Python through the venv's interpreter, never its console scripts (their shebangs name the folder the venv was made
# in), and hare from this checkout's src/ as the workflow's rules do: a copied or moved checkout, its .venv with it,
# builds in place and reruns nothing (docs/workflow.md).
HARE = PYTHONPATH=src $(BIN)/python -m hare
SNAKEMAKE = $(BIN)/python -m snakemake

.PHONY: all test setup tex slurm workflow report lint clean claim paper-core cost-model unlock

all: setup report
	@echo "PDF: results/paper.pdf   report: results/report.html   claims: results/claims.md"
	@sed -n 1,5p results/claims.md


# First the config is validated (hare validate-config): Snakemake reads every --configfile before the Snakefile runs and
# says of a YAML syntax error only that the file is not valid YAML; hare names the file and line, and a bad value's key,
# in one line. Then the machine's calibration figure (hare calibrate, a few seconds; README: how long the build takes
# here), also written to results/logs/calibration.json (logs/ is no workflow output and not in the manifest).
# The console shows Snakemake's progress lines and any error; its whole output goes to results/logs/workflow.log. Then
# every result file is checked against its sidecar and the manifest (hare verify), which catches what Snakemake cannot:
# a file damaged with its modification time kept.
workflow:
	@$(HARE) validate-config --here $(CONFIG) > /dev/null
	@mkdir -p results/logs
	@$(HARE) calibrate --json results/logs/calibration.json || echo "warning: hare calibrate failed; the build goes on without a calibration figure"
	@echo "snakemake --cores $(CORES) --configfile $(CONFIG)   (full log: results/logs/workflow.log)"
	@set -o pipefail; $(SNAKEMAKE) --cores $(CORES) --configfile $(CONFIG) 2>&1 | tee results/logs/workflow.log \
	  | { grep --line-buffered -E 'steps \(|[Ee]rror|Exception|Traceback|Nothing to be done|Complete log' || true; } \
	  || { if grep -q LockException results/logs/workflow.log; then \
	         echo "workflow failed: the working directory is locked by an earlier build that was interrupted; if none is running, run \`make unlock\`, then make all again"; \
	       else echo "workflow failed: see results/logs/workflow.log"; fi; exit 1; }
	@$(HARE) verify --results results > results/logs/verify.log \
	  || { cat results/logs/verify.log; echo "results differ from their sidecars, the manifest or the code now (listed above; bit rot keeps a file's time and snakemake --touch a stale result's, so Snakemake sees nothing to do)"; exit 1; }

# After an interrupted build (a killed make, a lost machine), Snakemake keeps its lock on the working directory and the
# next build stops with a LockException: make workflow says so on the console, and this removes the lock (run it only
# when no other build is running in this checkout).
unlock: setup
	$(SNAKEMAKE) --unlock --cores 1 --configfile $(CONFIG)

# Every figure and table of the finished workflow with its caption, in one self-contained HTML file.
report: workflow
	@$(SNAKEMAKE) --report results/report.html --configfile $(CONFIG) > results/logs/report.log 2>&1 \
	  || { echo "report failed: see results/logs/report.log"; exit 1; }

# One claim alone: builds only the inputs of paper/claims.yaml's claim KEY, then prints its verdict and interval (the
# config validated first, as for workflow).
claim: setup
	@test -n "$(KEY)" || { echo "usage: make claim KEY=<claim key of results/claims.md or paper/claims.yaml>"; exit 2; }
	@table=$$($(HARE) jobs --table $(CONFIG)) && printf '%s' "$$table" | $(BIN)/python -c "import json, sys; keys = [c['key'] for c in json.load(sys.stdin)['claims']]; sys.argv[1] in keys or (print(f'make claim: error: no claim {sys.argv[1]!r} in the register of $(CONFIG) ({len(keys)} claims; see results/claims.md)', file=sys.stderr), sys.exit(2))" '$(KEY)'
	$(SNAKEMAKE) results/claims/$(KEY).md --cores $(CORES) --configfile $(CONFIG)
	@cat results/claims/$(KEY).md

test: setup slurm
	$(BIN)/python -m pytest -n auto --dist loadgroup

setup: $(STAMP) tex

$(STAMP): envs/requirements.txt envs/requirements-test.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(if $(TORCH_INDEX),$(BIN)/python -m pip install --quiet --index-url $(TORCH_INDEX) $$(grep -m1 '^torch==' envs/requirements.txt))
	$(BIN)/python -m pip install --quiet -r envs/requirements-test.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

tex:
	@command -v latexmk >/dev/null 2>&1 || { \
	  echo "installing TeX Live (latexmk and the packages the paper needs)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(TEX_PACKAGES); }

# A one-node Slurm for tests/workflow/test_slurm.py (the smoke workflow through profiles/slurm), so that `make test`
# runs the same tests everywhere; where it cannot be installed the test skips, saying why.
slurm:
	@command -v slurmctld >/dev/null 2>&1 || { \
	  echo "installing slurm-wlm and munge (a one-node cluster for the Slurm workflow test)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  { $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends slurm-wlm munge; } \
	    || echo "warning: could not install slurm-wlm and munge; the Slurm test will be skipped"; }

lint:
	$(BIN)/python -m ruff check .
	$(SNAKEMAKE) --lint --configfile $(CONFIG)

clean:
	rm -rf results/runs results/tuning results/selected results/bench results/MANIFEST.sha256 results/tables results/checks results/notebooks results/logs results/latex results/paper.pdf results/claims.md results/claims.json results/claims results/report.html paper/generated paper/figures .snakemake

# The paper's core comparisons at the paper's scale on CPU (config/paper-core.yaml; measured time in docs/reproduction.md).
paper-core:
	$(MAKE) all CONFIG=config/paper-core.yaml

# The cost model of config/paper.yaml (docs/cost_model.md): the prepared datasets its jobs read (every preparation;
# hare jobs --datasets, the optional Covertype left out), then the phases of every policy entry (set-up, rounds,
# trainings, recording) at B = 5 and 20 runs (and those of paper-core that paper lacks), and the predicted CPU time of
# paper and paper-core.
cost-model: setup
	$(SNAKEMAKE) $$($(HARE) jobs config/paper.yaml --datasets) --cores $(CORES) --configfile config/paper.yaml
	@mkdir -p results/bench
	$(HARE) cost-model config/paper.yaml --results results --out results/bench/cost_model.json --runs 5 20 --budget 2 \
	  --predict config/paper.yaml config/paper-core.yaml $(if $(MEASURED),--measured $(MEASURED))
