"""Every caption of the report (report/*.rst) renders for every config, overlays resolved as the workflow resolves
them (rules/common.smk replaces Snakemake's ``config`` by the resolved config before the report reads it).

A caption is a jinja template that ``snakemake --report`` renders with ``snakemake.config``, the rule's ``params`` and
its ``wildcards``; a key that one config lacks fails that config's report at its very end. Rendered here with
``StrictUndefined``, so a missing key fails the test, not the build.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
import yaml

from hare.experiments.config import resolve_config_file

REPOSITORY = Path(__file__).resolve().parents[2]
CONFIGS = sorted(path for path in (REPOSITORY / "config").glob("*.yaml") if path.name != "schema.yaml")
CAPTIONS = sorted((REPOSITORY / "report").glob("*.rst"))


def rendered(caption: Path, snakemake: SimpleNamespace) -> str:
    template = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(caption.read_text())
    return template.render(snakemake=snakemake, categories={}, files={})


def table_rules(config: dict) -> list[SimpleNamespace]:
    """The ``snakemake`` object of every table rule (rules/experiments.smk: wildcard ``table``, params ``kind`` and
    ``caption``); a caption that reads no rule parameter renders the same with each."""
    return [
        SimpleNamespace(
            config=config,
            wildcards=SimpleNamespace(table=name),
            params=SimpleNamespace(kind=table["kind"], caption=table["caption"]),
        )
        for name, table in config["tables"].items()
    ]


def test_there_are_captions_and_configs():
    names = {path.name for path in CONFIGS}
    assert CAPTIONS and names >= {"default.yaml", "smoke.yaml", "paper-core.yaml", "paper.yaml"}


@pytest.mark.parametrize("config_path", CONFIGS, ids=lambda path: path.name)
@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda path: path.name)
def test_every_caption_renders_against_the_resolved_config(caption, config_path):
    config = resolve_config_file(config_path)
    for snakemake in table_rules(config):
        text = rendered(caption, snakemake)
        assert text.strip() and "{{" not in text and "{%" not in text


def test_an_overlay_as_written_lacks_keys_a_caption_reads():
    """Why the workflow gives the captions the resolved config: paper-core's theory section as written has no
    ``decomposition``, which report/decomposition.rst reads from the base."""
    written = yaml.safe_load((REPOSITORY / "config" / "paper-core.yaml").read_text())
    caption = REPOSITORY / "report" / "decomposition.rst"
    with pytest.raises(jinja2.UndefinedError, match="decomposition"):
        rendered(caption, SimpleNamespace(config=written, wildcards=SimpleNamespace(), params=SimpleNamespace()))
    resolved = resolve_config_file(REPOSITORY / "config" / "paper-core.yaml")
    runs = resolved["theory"]["decomposition"]["n_runs"]
    assert f"({runs} runs per horizon)" in rendered(caption, SimpleNamespace(config=resolved))
