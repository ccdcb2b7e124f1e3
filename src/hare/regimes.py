"""The information regimes (paper: sec:regimes), the one list every layer names them by.

``cold``: no policy reads a logged interaction (the environment withholds its logs,
:attr:`hare.envs.base.BanditEnvironment.logs_allowed`); a job or a run that names no regime is cold. ``warm``: every
policy, baselines and HARE alike, first learns from the same ``M`` logged interactions of the environment
(:meth:`hare.envs.base.BanditEnvironment.logged`), then plays online. A config's ``regime``
(``experiments.<name>.regime``, ``theory.convergence.variants.<label>.regime``) is one of :data:`REGIMES`, and
``config/schema.yaml`` lists the same (``tests/experiments/settings/test_schema_registries.py``).

A base-layer module: plain data, no import of ``hare``, so that the job runner, the config boundary and the table
builder (which imports no tensor library) read the same names.
"""

from __future__ import annotations

REGIMES = ("cold", "warm")
"""The information regimes: cold, then warm."""
