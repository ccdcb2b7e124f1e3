"""Static checks of the paper sources (no LaTeX run).

* every ``\\claimref{key}``, ``\\claimverdict{key}`` and ``\\asserts{key}`` names a key of ``paper/claims.yaml``, and
  claims are cited in no other way;
* every ``\\seedissue{key}`` names a key of ``hare.theory.seed_issues.SEED_ISSUES``;
* every ``\\cite...{keys}`` key exists in ``paper/refs.bib``;
* no number of two or more digits is typed in prose (outside macros, comments, labels,
  references, citations, URLs and the small explicit allowlist below);
* every ``\\input{generated/...}`` names a file that a rule of ``rules/*.smk`` produces;
* every check input of every claim is produced by every config, and every run file a claim reads is produced by
  at least one config (a typo would otherwise make a claim NOT RUN everywhere).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hare.experiments.config import resolve_config_file

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "paper"
TEX_FILES = [PAPER / "main.tex", *sorted((PAPER / "sections").glob("*.tex"))]

# Commands whose (first) braced argument is an identifier, not prose: stripped before the digit check.
IDENTIFIER_COMMANDS = (
    "label",
    "ref",
    "eqref",
    "cite",
    "citep",
    "citet",
    "citealp",
    "claim",
    "claimref",
    "claimverdict",
    "asserts",
    "claimfamilycount",
    "familycounts",
    "seedissue",
    "sha",
    "input",
    "include",
    "includegraphics",
    "href",
    "url",
    "bibliography",
    "bibliographystyle",
    "usepackage",
    "documentclass",
)
# \texttt{...} is stripped only when it holds a file name or identifier (no spaces; a dot, underscore,
# slash or hyphen inside), e.g. t10k-images-idx3-ubyte.gz; a bare \texttt{123} is still prose.
IDENTIFIER_TEXTTT = r"\\texttt\{[^}\s]*[._/\\-][^}\s]*\}"
# Tokens with digits allowed in prose: dtype names and the hash name (identifiers, not results).
DIGIT_ALLOWLIST = ("float64", "float32", "sha256")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _strip_comments(text: str) -> str:
    return re.sub(r"(?<!\\)%.*", "", text)


def _camel(key: str) -> str:
    words = [w for w in re.split(r"[^A-Za-z0-9]+", key) if w]
    return "".join(w[0].upper() + w[1:] for w in words)


@pytest.fixture(scope="module")
def sources() -> dict[Path, str]:
    return {path: _strip_comments(_read(path)) for path in TEX_FILES}


@pytest.fixture(scope="module")
def claims() -> list[dict]:
    from hare.theory.claims.register import load_configs, load_register

    return load_register(PAPER / "claims.yaml", load_configs([ROOT / "config" / "default.yaml"]))


@pytest.fixture(scope="module")
def claim_keys(claims) -> set[str]:
    return {claim["key"] for claim in claims}


def test_sections_exist():
    names = {p.stem for p in TEX_FILES}
    for section in ("introduction", "related", "method", "theory", "experiments", "limitations", "appendix"):
        assert section in names
        assert f"\\input{{sections/{section}}}" in _read(PAPER / "main.tex")


CLAIM_CITATION = re.compile(r"\\(?:claimref|claimverdict|asserts)\{([a-z0-9_]+)\}")


def test_claim_keys_exist(sources, claim_keys):
    used = {key for text in sources.values() for key in CLAIM_CITATION.findall(text)}
    assert used, "the paper refers to no claim"
    assert used <= claim_keys, f"unknown claim keys: {sorted(used - claim_keys)}"


def test_claims_are_cited_only_with_their_status(sources):
    """A claim key appears in prose only through \\claimref (key, status, interval), \\claimverdict (the verb follows
    the status) or \\asserts (the build fails unless PASS); no bare \\claim{key} and no number macro without its
    status."""
    for path, text in sources.items():
        prose = "\n".join(
            line for line in text.splitlines() if "newcommand" not in line and "DeclareUrlCommand" not in line
        )
        assert not re.findall(r"\\claim\{", prose), f"{path.name}: a bare \\claim{{...}} without its status"
        assert not re.findall(r"\\claim(?:Status|Measured|Threshold)[A-Z]", prose), (
            f"{path.name}: a retired claim macro"
        )


def test_seed_issue_keys_exist(sources):
    from hare.theory.seed_issues import SEED_ISSUES

    used = {key for text in sources.values() for key in re.findall(r"\\seedissue\{([^}\\]*)\}", text)}
    assert used <= set(SEED_ISSUES), f"unknown seed issues: {sorted(used - set(SEED_ISSUES))}"
    # theory, or its appendix
    listed = {key for text in sources.values() for key in re.findall(r"\\item\s*\\seedissue\{([^}]*)\}", text)}
    assert listed == set(SEED_ISSUES), f"seed issues not listed in the paper: {sorted(set(SEED_ISSUES) - listed)}"


def test_citations_exist(sources):
    bib = _read(PAPER / "refs.bib")
    entries = set(re.findall(r"@\w+\{([^,\s]+),", bib))
    cited = set()
    for text in sources.values():
        for group in re.findall(r"\\cite[a-z]*\*?(?:\[[^\]]*\])*\{([^}]*)\}", text):
            cited.update(k.strip() for k in group.split(",") if k.strip())
    assert cited, "the paper cites nothing"
    assert cited <= entries, f"citations missing from refs.bib: {sorted(cited - entries)}"


def _prose(text: str) -> str:
    """Text with comments, identifier arguments, macro names and allowlisted tokens removed."""
    for command in IDENTIFIER_COMMANDS:
        text = re.sub(rf"\\{command}\*?(?:\[[^\]]*\])*\{{[^}}]*\}}", " ", text)
    text = re.sub(IDENTIFIER_TEXTTT, " ", text)
    # environment names, float options, column specs
    text = re.sub(r"\\begin\{[^}]*\}(\[[^\]]*\])?(\{[^}]*\})?", " ", text)
    text = re.sub(r"\\end\{[^}]*\}", " ", text)
    text = re.sub(r"\\[A-Za-z@]+", " ", text)  # macro names (generated numbers are macros)
    for token in DIGIT_ALLOWLIST:
        text = text.replace(token, " ")
    return text


@pytest.mark.parametrize("path", TEX_FILES, ids=lambda p: p.name)
def test_no_hand_typed_numbers(path):
    text = _strip_comments(_read(path))
    if "\\begin{document}" in text:  # main.tex: the preamble holds layout lengths, not prose
        text = text.split("\\begin{document}", 1)[1]
    text = _prose(text)
    hits = [
        (m.group(0), text[max(0, m.start() - 30) : m.end() + 30].replace("\n", " "))
        for m in re.finditer(r"\d{2,}", text)
    ]
    assert not hits, f"{path.name}: numbers typed in prose: {hits}"


def test_prose_filter_catches_numbers():
    assert re.search(r"\d{2,}", _prose("regret of 123 rounds"))
    assert not re.search(r"\d{2,}", _prose(r"\label{tab:x12} \regretFoo{} \sha{abc123} \texttt{t10k-x.gz} in float64"))
    assert re.search(r"\d{2,}", _prose(r"\texttt{123}"))


def _workflow_outputs() -> set[str]:
    """Paths under paper/generated/ that rules/*.smk write (wildcard {table} expanded over every config's tables)."""
    patterns = set()
    for smk in (ROOT / "rules").glob("*.smk"):
        patterns.update(re.findall(r"[\"'](paper/generated/[^\"']+)[\"']", _read(smk)))
    tables = set()
    for config in (ROOT / "config").glob("*.yaml"):
        if config.name != "schema.yaml":
            tables.update(resolve_config_file(config)["tables"])
    outputs = set()
    for pattern in patterns:
        if "{table}" in pattern:
            outputs.update(pattern.replace("{table}", t) for t in tables)
        elif "{" not in pattern:
            outputs.add(pattern)
    return outputs


def test_generated_inputs_are_workflow_outputs(sources):
    outputs = _workflow_outputs()
    assert "paper/generated/regret_terms.tex" in outputs
    used = {f"paper/{name}" for text in sources.values() for name in re.findall(r"\\input\{(generated/[^}]+)\}", text)}
    used = {u if u.endswith(".tex") else u + ".tex" for u in used}
    assert used, "the paper inputs no generated file"
    assert used <= outputs, f"inputs no rule produces: {sorted(used - outputs)}"


def test_generated_tables_exist_in_every_config(sources):
    """Every table the TeX inputs is either a table of every config (paper-core included: a config that sets a table to
    null does not build it, and its PDF would fail) or a fixed output of a rule (the benchmarks)."""
    rule_tables = set(
        re.findall(r"paper/generated/table_([a-z_]+)\.tex", "".join(_read(p) for p in (ROOT / "rules").glob("*.smk")))
    )
    used = {
        name for text in sources.values() for name in re.findall(r"\\input\{generated/table_([^}.]+)", text)
    } - rule_tables
    configs = sorted(path.stem for path in (ROOT / "config").glob("*.yaml") if path.name != "schema.yaml")
    assert {"smoke", "default", "paper-core", "paper"} <= set(configs)
    for config in configs:
        data = resolve_config_file(ROOT / "config" / f"{config}.yaml")
        built = {name for name, table in data["tables"].items() if table is not None}
        missing = used - built
        assert not missing, f"config/{config}.yaml lacks tables {sorted(missing)}"


def test_figures_are_workflow_outputs(sources):
    smk = _read(ROOT / "rules" / "notebooks.smk")
    produced = set(re.findall(r"[\"']paper/(figures/[^\"']+\.pdf)[\"']", smk))
    used = {
        name for text in sources.values() for name in re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", text)
    }
    main = _read(PAPER / "main.tex")
    inputted = {PAPER / "main.tex"} | {
        PAPER / "sections" / f"{s}.tex" for s in re.findall(r"\\input\{sections/([^}]+)\}", main)
    }
    used_in_build = {
        name
        for path, text in sources.items()
        if path in inputted
        for name in re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", text)
    }
    assert used_in_build <= produced, f"figures no notebook rule produces: {sorted(used_in_build - produced)}"
    assert used, "no figure"
    assert "IfFileExists" not in "".join(sources.values())


def _produced_results(config: dict) -> set[str]:
    """Report run files of ``config`` and the wildcard-free ``results/...`` outputs of ``rules/*.smk``."""
    from hare.experiments.grid import expand_jobs

    runs = {f"results/{job.stem}.npz" for job in expand_jobs(config) if job.role == "report"}
    fixed = {
        p
        for smk in (ROOT / "rules").glob("*.smk")
        for p in re.findall(r"[\"'](results/[^\"'{}]+\.(?:json|npz))[\"']", _read(smk))
    }
    return runs | fixed


@pytest.mark.parametrize("name", ["smoke", "default", "paper-core", "paper"])
def test_claim_check_inputs_are_produced_by_every_config(claims, name):
    produced = _produced_results(resolve_config_file(ROOT / "config" / f"{name}.yaml"))
    # run files and the per-batch margins that go with them are produced where their batch runs (else NOT RUN)
    missing = {
        c["key"]: path
        for c in claims
        for path in c["inputs"].values()
        if not path.startswith(("results/runs/", "results/checks/margins/"))
        and path not in produced
        and not (path.startswith("paper/") and (ROOT / path).is_file())
    }
    assert not missing, f"config/{name}.yaml does not produce the inputs of {missing}"


def test_every_run_file_a_claim_reads_is_produced_by_some_config(claims):
    produced = set().union(
        *(_produced_results(resolve_config_file(ROOT / "config" / f"{n}.yaml")) for n in ("smoke", "default", "paper"))
    )
    orphans = {
        c["key"]: path
        for c in claims
        for path in c["inputs"].values()
        if path.startswith("results/runs/") and str(Path(path).with_suffix(".npz")) not in produced
    }
    assert not orphans, f"run files no config produces (these claims would be NOT RUN everywhere): {orphans}"
    batches = {"/".join(path.split("/")[2:4]) for path in produced if path.startswith("results/runs/")}
    stray = {
        c["key"]: path
        for c in claims
        for path in c["inputs"].values()
        if path.startswith("results/checks/margins/")
        and path.removeprefix("results/checks/margins/").removesuffix(".json") not in batches
    }
    assert not stray, f"margins of batches no config runs: {stray}"
