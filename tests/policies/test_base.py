"""Policy hyperparameters: every value is checked against its dataclass field's type before the policy sees it."""

import ast
from pathlib import Path

import pytest

import hare.policies
from hare.policies.base import make_config, policy_class, policy_names
from hare.typed import field_constraints


@pytest.mark.parametrize(
    "name, field, value",
    [
        ("rag_cosine", "fit_steps", "fifty"),
        ("rag_cosine", "fit_lr", "0.01"),
        ("rag_cosine", "projection_seed", "7"),
        ("hare", "projection_seed", "0"),
        ("lnucb_ta", "theta_max", 5.5),
        ("lnucb_ta", "attention", "yes"),
        ("linucb", "alpha", True),
    ],
)
def test_every_hyperparameter_is_typed(name, field, value):
    """A string where a number belongs (or a float where an int does, a string for a bool) is refused by name."""
    with pytest.raises(ValueError, match=rf"Config\.{field}: must be "):
        make_config(name, {field: value})


def test_typed_hyperparameters_accept_their_types():
    assert make_config("linucb", {"alpha": 1, "lam": 0.5}).alpha == 1
    assert make_config("rag_cosine", {"fit_steps": 50, "fit_lr": 0.01}).fit_steps == 50
    assert make_config("lnucb_ta", {"attention": False}).attention is False


POLICY_MODULES = sorted((Path(hare.policies.__file__).parent).glob("*.py"))


def _require_conditions(module: Path) -> list[tuple[str, ast.expr]]:
    """``(source, condition)`` of every ``<x>.require(condition, ...)`` call of a policy module."""
    tree = ast.parse(module.read_text())
    return [
        (ast.unparse(node.args[0]), node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "require"
    ]


def _one_field_against_constants(condition: ast.expr) -> bool:
    """Whether ``condition`` compares one config field with constants only (``self.alpha >= 0``, ``0 <= self.kappa
    <= 1``, ``self.mode in MODES``): a bound that belongs on the field's annotation. ``is None`` tests are the
    branches of cross-field rules (``alphas`` is set only with ``alpha_schedule='per_head'``)."""
    fields = {
        node.attr
        for node in ast.walk(condition)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "config")
    }
    return (
        isinstance(condition, ast.Compare)
        and len(fields) == 1
        and not any(isinstance(op, (ast.Is, ast.IsNot)) for op in condition.ops)
    )


def test_no_policy_module_spells_a_bound_in_code_or_twice():
    """Every one-field bound is declared on the field (hare.typed), and every cross-field rule is written once."""
    seen: dict[str, str] = {}
    for module in POLICY_MODULES:
        text = module.read_text()
        assert "isfinite" not in text, f"{module.name}: finiteness is hare.typed's check, for every field"
        for source, condition in _require_conditions(module):
            assert not _one_field_against_constants(condition), f"{module.name}: {source} belongs on the field"
            assert source not in seen, f"{source} spelled in {module.name} and in {seen[source]}"
            seen[source] = module.name


def test_the_planted_duplicate_and_the_planted_code_bound_are_caught():
    assert _one_field_against_constants(ast.parse("self.alpha >= 0", mode="eval").body)
    assert _one_field_against_constants(ast.parse("0 <= self.kappa <= 1", mode="eval").body)
    assert _one_field_against_constants(ast.parse("self.mode in MODES", mode="eval").body)
    assert not _one_field_against_constants(ast.parse("config.theta_max >= config.theta_min", mode="eval").body)
    assert not _one_field_against_constants(ast.parse("self.alphas is None", mode="eval").body)


@pytest.mark.parametrize("name", policy_names())
def test_every_field_declares_each_bound_once(name):
    """No field repeats a bound (a subclass redeclaring a field adds only what its bases lack)."""
    config_class = policy_class(name).config_class
    for field, bounds in field_constraints(config_class):
        texts = [bound.text for bound in bounds]
        assert len(texts) == len(set(texts)), f"{config_class.__name__}.{field}: {texts}"


@pytest.mark.parametrize(
    "name, field, value, message",
    [
        ("linucb", "alpha", -1.0, "LinUCBConfig.alpha: must be >= 0 (got -1.0)"),
        ("hare", "alpha", -1.0, "HAREConfig.alpha: must be >= 0 (got -1.0)"),
        ("neural_ucb", "lam", 0.0, "NeuralUCBConfig.lam: must be > 0 (Z = lam I + ...) (got 0.0)"),
        ("neural_ucb", "lam", -1.0, "NeuralUCBConfig.lam: must be >= 0 (got -1.0)"),
        ("bootstrap_nn", "lam", 0.0, None),
        ("hare_synthesize", "mode", "other", "HARESynthesizeConfig.mode: must be one of ('select', 'synthesize')"),
        ("lnucb_ta", "theta_max", 0, "LNUCBTAConfig.theta_max: must be >= theta_min (got 0)"),
        ("eps_greedy_enhanced", "theta_max", 0, "EpsGreedyEnhancedConfig.theta_max: must be >= theta_min (got 0)"),
        ("hare", "alphas", [0.5], "HAREConfig.alphas: only used by alpha_schedule='per_head' (got (0.5,))"),
    ],
)
def test_inherited_and_shared_bounds_name_the_class_and_field(name, field, value, message):
    if message is None:
        assert getattr(make_config(name, {field: value}), field) == value
        return
    with pytest.raises(ValueError) as error:
        make_config(name, {field: value})
    assert str(error.value).startswith(message)
