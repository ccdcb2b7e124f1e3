"""The registry of classes by name (hare.registry) behind the policies' and the environments' registries (named apart
from the dataset registry's tests: pytest needs distinct test module names)."""

import pytest

from hare.registry import Registry


def _registry(loaded: list[int] | None = None) -> Registry:
    calls = [] if loaded is None else loaded
    return Registry("widget name", "widget", "widgets", "widget_name", lambda: calls.append(1))


def test_a_registered_class_is_found_by_its_name_and_carries_it():
    widgets = _registry()

    @widgets.register("b")
    class B:
        pass

    @widgets.register("a")
    class A:
        pass

    assert widgets.get("a") is A and widgets.get("b") is B
    assert (A.widget_name, B.widget_name) == ("a", "b")
    assert widgets.names() == ["a", "b"]


def test_a_name_registered_twice_is_refused():
    widgets = _registry()
    widgets.register("a")(type("A", (), {}))
    with pytest.raises(ValueError, match=r"^widget name 'a' registered twice$"):
        widgets.register("a")(type("Other", (), {}))


def test_an_unknown_name_is_a_key_error_listing_the_known_ones():
    widgets = _registry()
    for name in ("b", "a"):
        widgets.register(name)(type(name.upper(), (), {}))
    with pytest.raises(KeyError, match=r"unknown widget 'c'; known widgets: a, b"):
        widgets.get("c")


def test_the_registering_modules_are_loaded_before_every_listing_and_lookup():
    loaded: list[int] = []
    widgets = _registry(loaded)
    widgets.register("a")(type("A", (), {}))
    widgets.names()
    widgets.get("a")
    assert loaded == [1, 1]


def test_the_policy_and_environment_registries_keep_their_messages():
    from hare.envs.registry import environment_class, environment_kinds
    from hare.policies.base import policy_class, policy_names

    assert "linucb" in policy_names() and environment_kinds()
    with pytest.raises(KeyError, match=r"unknown policy 'nope'; known policies: "):
        policy_class("nope")
    with pytest.raises(KeyError, match=r"unknown environment kind 'nope'; known kinds: "):
        environment_class("nope")
