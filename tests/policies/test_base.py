"""Policy hyperparameters: every value is checked against its dataclass field's type before the policy sees it."""

import pytest

from hare.policies.base import make_config


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
