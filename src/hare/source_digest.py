"""The code a step runs, as digests: what the workflow compares to decide a rerun and ``hare verify`` to find a
result computed by other code (docs/workflow.md, "Code is an input").

A module's digest is the sha256 of its abstract syntax tree with every docstring removed (``ast.dump`` without line
numbers), so comments, docstrings and formatting do not count and every other edit does. A step's code is the
*closure* of the modules it enters: each module with the package's modules it imports (at module level or inside a
function, and a string constant that names one), transitively, each by its digest.

Two kinds of import are not followed, because the code behind them does not run for every caller:

- **plugin imports**: a package ``__init__`` that imports submodules it does not re-export (``hare.policies``
  imports every policy family, ``hare.envs`` every environment) does so to fill a registry; which of them runs is
  decided by a name at run time;
- hence a registry's lookup (``build_policy(name)``, ``policy_class(name)``, ``environment_class(kind)``) adds the
  module that registers ``name`` (``@register_policy("linucb")`` in :mod:`hare.policies.linear`) when ``name`` is a
  string literal, and every registering module when it is not, unless the caller says which plugins run (an
  experiment job names its policy and environment: :func:`job_code`). A lookup that only reads a declaration of the
  class (``policy_class(name).config_class``, ``environment_class(kind).has_oracle``) runs none of its code and adds
  nothing; a lookup in the module that defines the lookup function is the registry itself.

Layer: base (it reads the package's sources and imports nothing of ``hare``).
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

PACKAGE = "hare"
PACKAGE_ROOT = Path(__file__).resolve().parent
"""The folder of the package ``hare`` whose sources are read."""

REGISTRY_LOOKUPS: dict[str, str] = {
    "build_policy": "register_policy",
    "policy_class": "register_policy",
    "environment_class": "register_environment",
}
"""Lookup function -> the class decorator that registers the names it looks up."""

DIGEST_CHARS = 16
"""Hex characters of a module's digest as recorded (64 bits)."""


@dataclass(frozen=True)
class ModuleSource:
    """What the closure needs of one module: its normalised digest, the package's modules it imports (followed),
    its plugin imports (not followed), the names it registers, and its registry lookups."""

    name: str
    digest: str
    imports: frozenset[str]
    plugins: frozenset[str]
    registers: tuple[tuple[str, str], ...]
    """``(decorator, name)`` of each ``@register_x("name")``."""
    literal_lookups: tuple[tuple[str, str], ...]
    """``(decorator, name)`` of each lookup by a string literal."""
    open_lookups: frozenset[str]
    """Decorators of the registries this module looks up by a name not in its source."""


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return tree


def normalised_digest(source: str) -> str:
    """sha256 of ``source``'s syntax tree without docstrings, line numbers, comments or formatting."""
    return _tree_digest(ast.parse(source))


def _tree_digest(tree: ast.AST) -> str:
    """:func:`normalised_digest` of a parsed tree (its docstrings are removed in place)."""
    return hashlib.sha256(ast.dump(_strip_docstrings(tree), include_attributes=False).encode()).hexdigest()


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _reads_declaration(node: ast.Call, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether a lookup's class is only read (``policy_class(name).config_class``, ``environment_class(kind)
    .has_oracle``): an attribute of it that is not called. A class called, a method of it called, or the class kept
    under a name runs (or may run) the plugin's code."""
    parent = parents.get(node)
    if not isinstance(parent, ast.Attribute) or parent.value is not node:
        return False
    grandparent = parents.get(parent)
    return not (isinstance(grandparent, ast.Call) and grandparent.func is parent)


def _literal(node: ast.Call) -> str | None:
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


class SourceIndex:
    """The modules of the package under ``root``, parsed on demand and kept (one index per process and root)."""

    def __init__(self, root: Path = PACKAGE_ROOT, package: str = PACKAGE):
        self.root, self.package = Path(root), package
        self.files: dict[str, Path] = {}
        for path in sorted(self.root.rglob("*.py")):
            parts = (package, *path.relative_to(self.root).with_suffix("").parts)
            self.files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
        self._modules: dict[str, ModuleSource] = {}

    def module(self, name: str) -> ModuleSource:
        """The parsed module ``name`` (``KeyError`` for a name that is no module of the package)."""
        if name not in self._modules:
            self._modules[name] = self._parse(name)
        return self._modules[name]

    def _package_of(self, name: str) -> str:
        return name if self.files[name].name == "__init__.py" else name.rpartition(".")[0]

    def _parse(self, name: str) -> ModuleSource:
        """One parse and one walk of the module: its imports, registrations and lookups, then its digest (the same
        tree with its docstrings removed)."""
        tree = ast.parse(self.files[name].read_text())
        package = self._package_of(name)
        is_init = self.files[name].name == "__init__.py"
        exported = _all_names(tree) if is_init else set()
        imports: set[str] = set()
        plugins: set[str] = set()
        registers, literal, open_ = [], [], set()
        defined: set[str] = set()  # functions and parameters of this module: a name that shadows a lookup
        lookups: list[tuple[ast.Call, str]] = []
        parents: dict[ast.AST, ast.AST] = {}
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            for child in ast.iter_child_nodes(node):
                parents[child] = node
                stack.append(child)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined.add(node.name)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.Import):
                imports.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = self._resolve(node, package)
                if base is None:
                    continue
                submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in self.files]
                registration = (
                    is_init
                    and base == name
                    and submodules
                    and len(submodules) == len(node.names)
                    and not any(alias.name in exported for alias in node.names)
                )
                if registration:
                    plugins.update(submodules)
                    continue
                imports.add(base)
                imports.update(submodules)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in self.files:
                imports.add(node.value)
            elif isinstance(node, ast.Call) and (called := _call_name(node)) is not None:
                if called in REGISTRY_LOOKUPS.values() and (value := _literal(node)) is not None:
                    registers.append((called, value))
                elif called in REGISTRY_LOOKUPS:
                    lookups.append((node, called))
        for node, called in lookups:
            if called in defined:
                continue
            value = _literal(node)
            if value is not None:
                literal.append((REGISTRY_LOOKUPS[called], value))
            elif not _reads_declaration(node, parents):
                open_.add(REGISTRY_LOOKUPS[called])
        return ModuleSource(
            name=name,
            digest=_tree_digest(tree)[:DIGEST_CHARS],
            imports=frozenset(m for m in imports if m in self.files and m != name),
            plugins=frozenset(plugins),
            registers=tuple(sorted(registers)),
            literal_lookups=tuple(sorted(literal)),
            open_lookups=frozenset(open_),
        )

    def _resolve(self, node: ast.ImportFrom, package: str) -> str | None:
        if node.level:
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        return base if base == self.package or base.startswith(self.package + ".") else None

    @functools.cached_property
    def registered(self) -> dict[tuple[str, str], str]:
        """``{(decorator, name): module}`` of every registration in the package."""
        table = {}
        decorators = tuple(set(REGISTRY_LOOKUPS.values()))
        for name, path in self.files.items():
            if any(decorator in path.read_text() for decorator in decorators):  # parse only where one can be
                for entry in self.module(name).registers:
                    table[entry] = name
        return table

    def plugin_module(self, decorator: str, name: str) -> str:
        """The module that registers ``name`` with ``decorator`` (``KeyError`` naming it when none does)."""
        try:
            return self.registered[(decorator, name)]
        except KeyError:
            raise KeyError(f"no module of {self.package} registers {name!r} ({decorator})") from None

    def closure(
        self, entries: Iterable[str], plugins: Iterable[tuple[str, str]] | None = None, leaves: Iterable[str] = ()
    ) -> dict[str, str]:
        """``{module: digest}`` of ``entries`` and every module they import, transitively (not through plugin
        imports), with the packages whose ``__init__`` an import runs (their own digest: what they import is followed
        only where something imports it). ``plugins``: the ``(decorator, name)`` pairs that run, whose registering
        modules (and their closures) join; None: each lookup by a literal adds its module, and an open lookup every
        module of that registry. ``leaves``: modules whose own digest counts but whose imports are not followed (the
        command line's argument types, which consult the registries only to refuse a name)."""
        leaves = frozenset(leaves)
        named = None if plugins is None else {self.plugin_module(*entry) for entry in plugins}
        seen: dict[str, str] = {}
        expanded: set[str] = set()
        stack = list(entries) + sorted(named or ())
        while stack:
            name = stack.pop()
            if name in expanded:
                continue
            expanded.add(name)
            module = self.module(name)
            seen[name] = module.digest
            if name in leaves:
                continue
            stack.extend(module.imports)
            for ancestor in _ancestors(name):  # its __init__ runs first: its own code counts, its imports are its own
                if ancestor in self.files:
                    seen[ancestor] = self.module(ancestor).digest
            stack.extend(self.plugin_module(*entry) for entry in module.literal_lookups)
            if named is None:
                for decorator in module.open_lookups:
                    stack.extend(m for (d, _), m in self.registered.items() if d == decorator)
        return dict(sorted(seen.items()))

    def imported(self, node: ast.AST, package: str) -> set[str]:
        """The names an import statement ``node`` of a module of ``package`` imports, as :attr:`files` may hold them:
        ``import a.b`` -> ``a.b``; ``from a import b, c`` -> ``a`` and each of ``a.b``, ``a.c`` that is a module
        (relative imports resolved); nothing for any other node or an import from outside the package."""
        if isinstance(node, ast.Import):
            return {alias.name for alias in node.names}
        if isinstance(node, ast.ImportFrom) and (base := self._resolve(node, package)) is not None:
            return {base, *(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in self.files)}
        return set()

    @functools.cache  # noqa: B019 (one index per process and root: source_index)
    def _functions(self, module: str) -> tuple[dict[str, ast.AST], tuple[ast.stmt, ...]]:
        """The top-level functions of ``module`` by name, and its top-level statements (parsed once)."""
        tree = ast.parse(self.files[module].read_text())
        functions = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return functions, tuple(tree.body)

    def function_source(self, module: str, qualname: str) -> tuple[str, frozenset[str]]:
        """Digest of function ``qualname`` of ``module`` (with the same module's functions it calls, transitively)
        and the package's modules those functions import; the entry of a command-line step."""
        functions, body = self._functions(module)
        package = self._package_of(module)
        todo, done = [qualname], []
        imports: set[str] = set()
        while todo:
            current = todo.pop()
            if current in done or current not in functions:
                continue
            done.append(current)
            for node in ast.walk(functions[current]):
                if isinstance(node, ast.Name) and node.id in functions:
                    todo.append(node.id)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in self.files:
                    imports.add(node.value)
                else:
                    imports |= self.imported(node, package)
        for node in body:  # the module's own top-level imports (the command-line helpers it shares)
            if isinstance(node, ast.ImportFrom):
                imports |= self.imported(node, package)
        dumped = "\n".join(  # the kept tree stays as parsed: its docstrings are removed from a copy
            ast.dump(_strip_docstrings(copy.deepcopy(functions[name])), include_attributes=False)
            for name in sorted(done)
        )
        digest = hashlib.sha256(dumped.encode()).hexdigest()[:DIGEST_CHARS]
        return digest, frozenset(m for m in imports if m in self.files)


def _ancestors(name: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b"]``: the packages whose ``__init__`` an import of ``name`` runs first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _all_names(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:
                return set()
    return set()


@functools.lru_cache(maxsize=4)
def source_index(root: Path = PACKAGE_ROOT) -> SourceIndex:
    """The index of the package's sources under ``root`` (kept for the process)."""
    return SourceIndex(root)


def combined_digest(modules: Mapping[str, str]) -> str:
    """One sha256 over ``{module: digest}`` (sorted), the figure a rule's params and a result's record carry."""
    text = "\n".join(f"{name} {digest}" for name, digest in sorted(modules.items()))
    return hashlib.sha256(text.encode()).hexdigest()


class _Kind(Protocol):
    @property
    def kind(self) -> str: ...


class PluggedJob(Protocol):
    """What :func:`job_plugins` reads of a job: its ``policy`` and its ``environment.kind`` (a job specification,
    :class:`hare.experiments.job_spec.JobSpec`, which this base module names but does not import)."""

    @property
    def policy(self) -> str: ...

    @property
    def environment(self) -> _Kind: ...


def job_plugins(spec: PluggedJob) -> list[tuple[str, str]]:
    """The plugins an experiment job runs: its policy and its environment's kind."""
    return [("register_policy", spec.policy), ("register_environment", spec.environment.kind)]


def job_code(spec: PluggedJob, round_loop: Iterable[str], index: SourceIndex | None = None) -> dict[str, str]:
    """``{module: digest}`` of the code a job runs: the closure of the modules ``round_loop`` names (the module that
    plays and records a job: :data:`hare.experiments.run.ROUND_LOOP`) with the job's policy and environment modules
    and their closures (:func:`job_plugins`); no other plugin."""
    return (index or source_index()).closure(round_loop, plugins=job_plugins(spec))


def changed_modules(recorded: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """Modules whose digest differs between a result's record and the code now (added and removed ones too)."""
    return sorted(name for name in set(recorded) | set(now) if recorded.get(name) != now.get(name))


@functools.lru_cache(maxsize=4)
def tree_state(root: Path = PACKAGE_ROOT) -> dict[str, object]:
    """``{"commit": sha or "unknown", "dirty": bool | None}`` of the checkout holding ``root``: dirty when a tracked
    file differs from the commit or an untracked file lies in the package's sources (None outside git)."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        status = git("status", "--porcelain", "--untracked-files=normal", "--", ".")
        tracked = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "unknown", "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip() or tracked.strip())}
