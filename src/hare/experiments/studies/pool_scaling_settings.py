"""The ``pool_scaling`` section's settings, where the study reads them; they are checked at the config boundary,
:mod:`hare.experiments.settings.pool_scaling`."""

from hare.experiments.settings.pool_scaling import (
    AXES,
    CLUSTER_RULES,
    COVARIANCE_KINDS,
    ITEMS_PER_CLUSTER,
    REGRET_KEYS,
    WHERE,
    PoolScalingSettings,
    check_regret,
    cluster_count,
    hare_params,
    settings_from_config,
)

__all__ = [
    "AXES",
    "CLUSTER_RULES",
    "COVARIANCE_KINDS",
    "ITEMS_PER_CLUSTER",
    "REGRET_KEYS",
    "WHERE",
    "PoolScalingSettings",
    "check_regret",
    "cluster_count",
    "hare_params",
    "settings_from_config",
]
