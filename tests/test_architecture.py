"""The package's import graph: layers that point one way, and no cycles.

The layers, lowest first (documented in ``src/hare/__init__.py``; :data:`LAYERS` is their executable form):
base (``typed``, ``io``, ``random``, ``allocator``, ``statistics``, ``verdicts``) < ``data`` < ``envs`` < ``model``
< ``policies`` < ``report`` < ``experiments`` < ``theory`` < ``cli``. A module of ``hare`` imports its own layer or
a lower one only. An import counts wherever it is written: at module level or inside a function, as a string given
to ``importlib.import_module`` or ``__import__`` (an f-string by its literal start up to its last dot:
``f"hare.theory.{name}"`` imports ``hare.theory``), and as any string constant that names a module of the package.
``report``, which renders the numbers it is given, imports the base only.

No module imports, directly or through others, a module that imports it back; a package's ``__init__``
re-exporting its own submodules is not a cycle.
"""

from __future__ import annotations

import ast
import shutil
from collections import defaultdict
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"

LAYERS: dict[str, int] = {
    "": 0,
    "typed": 0,
    "io": 0,
    "random": 0,
    "allocator": 0,
    "statistics": 0,
    "verdicts": 0,
    "notation": 0,
    "registry": 0,
    "regimes": 0,
    "novelty": 0,
    "source_digest": 0,
    "data": 1,
    "envs": 2,
    "model": 3,
    "policies": 4,
    "report": 5,
    "experiments": 6,
    "theory": 7,
    "cli": 8,
    "__main__": 8,
}
"""The rank of each top-level module or package of ``hare`` (``""``: the package ``hare`` itself)."""

DYNAMIC_IMPORTS = ("import_module", "__import__")


def module_name(path: Path, root: Path = SOURCE) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_sources(root: Path = SOURCE) -> dict[str, tuple[str, bool]]:
    """``{module name: (source, whether it is a package's __init__)}`` of every module of ``hare`` under ``root``."""
    return {
        module_name(p, root): (p.read_text(), p.name == "__init__.py") for p in sorted((root / "hare").rglob("*.py"))
    }


def _literal_start(node: ast.expr) -> str | None:
    """The module a dynamic import's argument names: a string, or an f-string's literal start up to its last dot."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value).rpartition(".")[0] or None
    return None


def imported_names(name: str, source: str, is_package: bool = False, modules: frozenset[str] = frozenset()) -> set[str]:
    """Every dotted name the module ``name`` (``source``) imports, anywhere in it: ``import a.b`` gives ``a.b``,
    ``from a import b`` gives ``a`` and ``a.b`` (relative imports resolved), a dynamic import its literal name, and
    a string constant the name of one of ``modules``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                module = ".".join(base[: len(base) - node.level + 1] + ([module] if module else []))
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and node.args:
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            target = _literal_start(node.args[0]) if called in DYNAMIC_IMPORTS else None
            if target:
                names.add(target)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules:
            names.add(node.value)
    return names


def layer(name: str) -> int:
    """The rank of a dotted name inside ``hare`` (:data:`LAYERS`); ``KeyError`` for a top-level name it does not
    list."""
    parts = name.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else ""]


def upward_imports(sources: dict[str, tuple[str, bool]]) -> list[tuple[str, str]]:
    """``(module, imported name)`` of every import of a higher layer than the module's own, sorted."""
    modules = frozenset(sources)
    return sorted(
        {
            (name, target)
            for name, (source, is_package) in sources.items()
            for target in imported_names(name, source, is_package, modules)
            if (target == "hare" or target.startswith("hare.")) and layer(target) > layer(name)
        }
    )


def import_graph(sources: dict[str, tuple[str, bool]] | None = None) -> dict[str, set[str]]:
    """``{module: the modules of the package it imports}``, without a package's imports of its own submodules and
    a submodule's of its packages."""
    sources = package_sources() if sources is None else sources
    modules = frozenset(sources)
    graph: dict[str, set[str]] = defaultdict(set)
    for name, (source, is_package) in sources.items():
        graph[name].update(
            t
            for t in imported_names(name, source, is_package, modules)
            if t in modules and t != name and not name.startswith(t + ".") and not t.startswith(name + ".")
        )
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_every_module_has_a_layer():
    """A new top-level module or package of ``hare`` needs its place in :data:`LAYERS` (and in the package
    docstring)."""
    assert sorted({name.split(".")[1] for name in package_sources() if "." in name} - set(LAYERS)) == []


def test_the_checker_reports_planted_upward_imports():
    """Every form of import counts: module level, inside a function, relative, dynamic (a string, an f-string,
    ``__import__``), a string constant naming a module; downward imports and ones of other packages do not."""
    sources = {
        "hare.envs.top": ("import hare.theory.claims\n", False),
        "hare.model.inner": (
            "def f():\n    from hare.experiments.grid import expand_jobs\n    return expand_jobs\n",
            False,
        ),
        "hare.policies.relative": ("def f():\n    from ..report import latex\n    return latex\n", False),
        "hare.experiments.dynamic": (
            "import importlib\n\n\ndef f(name):\n    return importlib.import_module(f'hare.theory.{name}')\n",
            False,
        ),
        "hare.experiments.string": (
            "from importlib import import_module\n\nMODULE = import_module('hare.cli')\n",
            False,
        ),
        "hare.data.builtin": ("def f():\n    return __import__('hare.policies.base')\n", False),
        "hare.report.registry": ("STUDIES = ('hare.theory.claims',)\n", False),
        "hare.theory.claims": (
            "import numpy\nfrom hare import verdicts\nfrom hare.experiments import grid\n\n\n"
            "def f():\n    from hare.report.latex import macros\n",
            False,
        ),
        "hare.cli": ("from hare.theory import claims\n", True),
    }
    assert upward_imports(sources) == [
        ("hare.data.builtin", "hare.policies.base"),
        ("hare.envs.top", "hare.theory.claims"),
        ("hare.experiments.dynamic", "hare.theory"),
        ("hare.experiments.string", "hare.cli"),
        ("hare.model.inner", "hare.experiments.grid"),
        ("hare.model.inner", "hare.experiments.grid.expand_jobs"),
        ("hare.policies.relative", "hare.report"),
        ("hare.policies.relative", "hare.report.latex"),
        ("hare.report.registry", "hare.theory.claims"),
    ]


def test_the_checker_reads_a_planted_module_from_a_source_tree(tmp_path):
    """The same check on files: a module of a lower layer that imports an upper one inside a function is reported."""
    files = {
        "hare/__init__.py": "",
        "hare/io.py": "",
        "hare/envs/__init__.py": "",
        "hare/envs/planted.py": "from hare.io import write_text\n\n\n"
        "def sneak():\n    from hare.theory.claims import decide\n    return decide, write_text\n",
        "hare/theory/__init__.py": "",
        "hare/theory/claims.py": "from hare.envs import planted\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert upward_imports(package_sources(tmp_path)) == [
        ("hare.envs.planted", "hare.theory.claims"),
        ("hare.envs.planted", "hare.theory.claims.decide"),
    ]
    assert cycles(import_graph(package_sources(tmp_path))) == [["hare.envs.planted", "hare.theory.claims"]]


def test_layers_import_downward_only():
    """Every module of ``hare``, every import of it (see the module docstring), against :data:`LAYERS`."""
    assert upward_imports(package_sources()) == []


REPORT_READS = ("hare.data.registry",)
"""What ``report`` may import above the base: the dataset records, for their display names (one record per dataset)."""


def test_report_imports_only_the_base():
    """``report`` renders numbers it is given: below the layers that compute, it imports none of the others either,
    but the dataset records (:data:`REPORT_READS`)."""
    sources = package_sources()
    reached = sorted(
        {
            target
            for name, (source, is_package) in sources.items()
            if name.startswith("hare.report")
            for target in imported_names(name, source, is_package, frozenset(sources))
            if target.startswith("hare.") and not target.startswith("hare.report") and layer(target) > 0
        }
    )
    assert [target for target in reached if not target.startswith(REPORT_READS)] == []


SUBPACKAGE_LAYERS: dict[str, int] = {
    "experiments.settings": 0,
    "experiments": 1,
    "experiments.studies": 2,
    "experiments.tables": 2,
    "theory": 0,
    "theory.claims": 1,
}
"""Ranks inside a top-level package, lowest first: a module imports modules of its own sub-package's rank or a lower
one. ``experiments.settings`` (the config boundary) reads no other module of ``experiments``; the running modules of
``experiments`` read their settings from it; the studies and the tables build on both and never the other way. In
``theory`` the claims register builds on the studies of the theory."""


def unit(name: str, packages: frozenset[str]) -> str:
    """The sub-package (or top-level package, or base module) a module belongs to, without ``hare.``: the longest
    package among ``packages`` that contains it."""
    parts = name.split(".")
    for end in range(len(parts), 2, -1):
        if ".".join(parts[:end]) in packages:
            return ".".join(parts[1:end])
    return parts[1] if len(parts) > 1 else ""


def subpackages(sources: dict[str, tuple[str, bool]]) -> frozenset[str]:
    """Every package of ``hare`` below a top-level one (``hare.experiments.studies``)."""
    return frozenset(name for name, (_, is_package) in sources.items() if is_package and name.count(".") >= 2)


def unit_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """The import graph (:func:`import_graph`) contracted onto units (:func:`unit`), without a unit's own imports."""
    packages = subpackages(sources)
    graph: dict[str, set[str]] = defaultdict(set)
    for name, targets in import_graph(sources).items():
        graph[unit(name, packages)].update(
            unit(target, packages) for target in targets if unit(target, packages) != unit(name, packages)
        )
    return graph


def upward_subpackage_imports(sources: dict[str, tuple[str, bool]]) -> list[tuple[str, str]]:
    """``(module, imported module)`` of every import, within one top-level package, of a higher-ranked sub-package
    (:data:`SUBPACKAGE_LAYERS`), sorted."""
    packages = subpackages(sources)
    found = set()
    for name, targets in import_graph(sources).items():
        source = unit(name, packages)
        for target in targets:
            goal = unit(target, packages)
            if source in SUBPACKAGE_LAYERS and goal in SUBPACKAGE_LAYERS and source.split(".")[0] == goal.split(".")[0]:
                if SUBPACKAGE_LAYERS[goal] > SUBPACKAGE_LAYERS[source]:
                    found.add((name, target))
    return sorted(found)


def test_every_subpackage_has_a_rank():
    sources = package_sources()
    named = {name.removeprefix("hare.") for name in subpackages(sources)}
    assert sorted(named - set(SUBPACKAGE_LAYERS)) == []
    assert {name.split(".")[0] for name in named} <= set(SUBPACKAGE_LAYERS)


def test_subpackages_import_downward_only():
    """``experiments`` never imports ``experiments.studies`` or ``experiments.tables`` (it did: the config check
    imported the personalization and convergence studies inside a function while the cost model imported the grid)."""
    assert upward_subpackage_imports(package_sources()) == []


def test_no_loops_between_subpackages():
    assert cycles(unit_graph(package_sources())) == []


def _plant(tree, module: str, text: str) -> None:
    path = tree / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + text)


def test_a_planted_loop_between_subpackages_fails_the_checks(tmp_path):
    """A copy of the real tree with one import added inside a function of the grid (the running modules of
    ``experiments``) from a study that imports the grid: both the rank check and the loop check report it; the real
    tree is not touched."""
    shutil.copytree(SOURCE / "hare", tmp_path / "hare", ignore=shutil.ignore_patterns("__pycache__"))
    assert upward_subpackage_imports(package_sources(tmp_path)) == []
    assert cycles(unit_graph(package_sources(tmp_path))) == []
    _plant(
        tmp_path, "hare.experiments.grid", "\n\ndef _planted():\n    from hare.experiments.studies import cost_model\n"
    )
    _plant(tmp_path, "hare.experiments.studies.cost_model", "\n\nfrom hare.experiments.grid import expand_jobs\n")
    sources = package_sources(tmp_path)
    assert ("hare.experiments.grid", "hare.experiments.studies.cost_model") in upward_subpackage_imports(sources)
    assert ["experiments", "experiments.studies"] in cycles(unit_graph(sources))
    assert cycles(import_graph(sources))  # the module graph sees this one too; a loop through two modules of each
    # side, which the module graph does not see, is the next case


def test_a_loop_the_module_graph_does_not_see_is_found_between_subpackages(tmp_path):
    """grid -> studies.a and studies.b -> config: no module imports one that imports it back, yet the sub-packages
    ``experiments`` and ``experiments.studies`` import each other."""
    files = {
        "hare/__init__.py": "",
        "hare/experiments/__init__.py": "",
        "hare/experiments/grid.py": "def f():\n    from hare.experiments.studies import a\n",
        "hare/experiments/config.py": "",
        "hare/experiments/studies/__init__.py": "",
        "hare/experiments/studies/a.py": "",
        "hare/experiments/studies/b.py": "from hare.experiments import config\n",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    sources = package_sources(tmp_path)
    assert cycles(import_graph(sources)) == []
    assert cycles(unit_graph(sources)) == [["experiments", "experiments.studies"]]
    assert ("hare.experiments.grid", "hare.experiments.studies.a") in upward_subpackage_imports(sources)
