"""The ``cost_growth`` section's settings, where the study reads them; they are checked at the config boundary,
:mod:`hare.experiments.settings.cost_growth`."""

from hare.experiments.settings.cost_growth import (
    BASE_KEYS,
    DEFAULT_POLICIES,
    WHERE,
    CostGrowthSettings,
    settings_from_config,
)

__all__ = ["BASE_KEYS", "DEFAULT_POLICIES", "WHERE", "CostGrowthSettings", "settings_from_config"]
