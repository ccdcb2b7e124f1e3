import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from hare import cli
from hare.experiments.config import load_config, resolve_config_file
from hare.experiments.grid import expand_jobs
from hare.experiments.plan import batch_entries, job_table
from hare.experiments.run import BATCH_CPU

REPOSITORY = Path(__file__).resolve().parents[2]
SMOKE = REPOSITORY / "config" / "smoke.yaml"


def _synthetic_config(tmp_path: Path) -> Path:
    """The smoke config cut to one tuned synthetic experiment of 20 rounds."""
    config = resolve_config_file(SMOKE)
    config["experiments"] = {"synthetic": {**config["experiments"]["synthetic"], "horizon": 20}}
    config["tables"] = {name: table for name, table in config["tables"].items() if table["experiment"] == "synthetic"}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_table_lists_every_job_once_with_its_batch_selection_and_tuning_runs():
    config = load_config([SMOKE])
    table = job_table(config)
    jobs = expand_jobs(config)
    assert [row["stem"] for row in table["jobs"]] == [job.stem for job in jobs]
    batched = [stem for batch in table["batches"].values() for stem in batch["jobs"]]
    assert sorted(batched) == sorted(job.stem for job in jobs) and len(set(batched)) == len(batched)
    for row in table["jobs"]:
        assert row["stem"] in table["batches"][row["batch"]]["jobs"]
        assert row["stem"] == f"{row['folder']}/{row['batch']}/{row['label']}"
        if row["selection"]:
            assert row["tuning"] and all(
                stem.startswith(f"tuning/{row['experiment']}/{row['environment']}/{row['label']}@")
                for stem in row["tuning"]
            )
        else:
            assert row["tuning"] == []
    assert json.loads(json.dumps(table)) == table


def test_the_digest_follows_the_jobs_of_its_batch_only():
    config = load_config([SMOKE])
    before = job_table(config)["batches"]
    changed = json.loads(json.dumps(config))
    changed["experiments"]["synthetic"]["n_runs"] += 1
    after = job_table(changed)["batches"]
    moved = {name for name in before if before[name]["digest"] != after[name]["digest"]}
    assert moved == {name for name in before if name.split("/")[0] == "synthetic"}


def test_the_command_writes_the_table_with_the_claims_of_the_config(capsys):
    assert cli.main(["jobs", str(SMOKE), "--table", "--register", str(REPOSITORY / "paper" / "claims.yaml")]) == 0
    table = json.loads(capsys.readouterr().out)
    assert {"config", "optional_datasets", "jobs", "batches", "claims"} <= set(table)
    assert table["claims"] and all(set(claim) == {"key", "inputs"} for claim in table["claims"])


def test_a_batch_runs_from_the_config_files_and_writes_what_the_table_names(tmp_path, capsys):
    config_path = _synthetic_config(tmp_path)
    table = job_table(load_config([config_path]))
    batch = "synthetic/synthetic_linear"
    planned = table["batches"][batch]
    assert {stem.split("/")[0] for stem in planned["jobs"]} == {"tuning", "runs"}
    assert (
        cli.main(
            [
                "run-batch",
                "--config",
                str(config_path),
                "--batch",
                batch,
                "--results",
                str(tmp_path / "results"),
                "--digest",
                planned["digest"],
                "--progress",
                "off",
            ]
        )
        == 0
    )
    for stem in planned["jobs"]:
        with np.load(tmp_path / "results" / f"{stem}.npz") as result:
            assert result["cumulative_regret"].shape[1] == len(result["rounds"])
        assert json.loads((tmp_path / "results" / f"{stem}.json").read_text())["job"]["environment"]["horizon"] == 20
    # its last line: the process's CPU seconds, which the cost model's check reads back
    last = capsys.readouterr().out.strip().splitlines()[-1]
    (match,) = BATCH_CPU.findall(last)
    assert match[0] == batch and float(match[1]) > 0


def test_a_batch_refuses_a_digest_the_config_no_longer_gives_before_any_compute(tmp_path, capsys):
    config_path = _synthetic_config(tmp_path)
    batch = "synthetic/synthetic_linear"
    assert (
        cli.main(
            [
                "run-batch",
                "--config",
                str(config_path),
                "--batch",
                batch,
                "--results",
                str(tmp_path / "results"),
                "--digest",
                "0" * 64,
            ]
        )
        == 2
    )
    assert "differ from the ones the workflow planned" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_an_unknown_batch_is_named(tmp_path):
    with pytest.raises(ValueError, match="'nope/none'"):
        batch_entries(load_config([_synthetic_config(tmp_path)]), "nope/none", tmp_path)


def test_the_workflow_imports_nothing_from_the_package_and_never_changes_its_config():
    """The workflow reads the job table (hare jobs --table) and calls the command line; the library never runs inside
    it. Its config changes once only, in rules/common.smk: replaced by the table's resolved config (the same values
    with an overlay's inherited keys filled in, which the report's captions read), and nowhere else."""
    sanctioned = "config.clear()\nconfig.update(copy.deepcopy(CONFIG))\n"
    sources = [REPOSITORY / "Snakefile", *sorted((REPOSITORY / "rules").glob("*.smk"))]
    common = (REPOSITORY / "rules" / "common.smk").read_text()
    assert common.count(sanctioned) == 1 and common.index('CONFIG = PLAN["config"]') < common.index(sanctioned)
    for path in sources:
        text = path.read_text().replace(sanctioned, "", 1 if path.name == "common.smk" else 0)
        assert not re.search(r"sys\.path|import hare|from hare", text), path.name
        assert not re.search(r"\bconfig\s*\.\s*(clear|update|pop|setdefault)\(|\bconfig\s*\[[^\]]+\]\s*=", text), (
            path.name
        )


def test_the_table_names_optional_datasets_without_probing_and_the_checkpoint_leaves_their_jobs_out(
    tmp_path, monkeypatch
):
    """Parsing reads no network; the checkpoint's record (hare skipped-datasets) drops Covertype's jobs and nothing
    else."""
    from hare.data import availability
    from hare.experiments.plan import availability_record

    def unreachable(*args, **kwargs):
        raise availability.requests.exceptions.ConnectionError("no route")

    config = load_config([REPOSITORY / "config" / "paper.yaml"])
    monkeypatch.setattr(availability.requests, "head", lambda *a, **k: pytest.fail("the job table probed the network"))
    table = job_table(config)
    assert table["optional_datasets"] == ["covertype"]
    monkeypatch.setattr(availability.requests, "head", unreachable)
    record = availability_record(config, tmp_path / "raw")
    assert [row["dataset"] for row in record["skipped"]] == ["covertype"]
    covertype = {row["stem"] for row in table["jobs"] if row["dataset_name"] == "covertype"}
    assert covertype and set(record["stems"]) == {row["stem"] for row in table["jobs"]} - covertype
    assert set(record["tables"]) <= set(config["tables"])


def test_a_config_without_optional_datasets_needs_no_checkpoint():
    assert job_table(load_config([SMOKE]))["optional_datasets"] == []


# -- the pre-flight memory check (issue 28) ---------------------------------------------------------------------------
