"""HARE: Hybrid Attention-Reinforced Exploration, and the batched bandit library behind its paper.

The package's layers, lowest first. A module imports from its own layer and the layers below it only: at module
level, inside functions and through ``importlib`` alike (``tests/test_architecture.py`` checks every module).

1. base: ``typed`` (typed config fields), ``io`` (atomic writes, npz/JSON/YAML), ``random`` (the counter RNG),
   ``allocator`` (glibc's allocator switch), ``statistics`` (t intervals, growth exponents), ``verdicts`` (the
   rule that decides a claim on its interval, p-values, multiplicity, run plans), ``notation`` (the glossary:
   paper symbol, config field, code identifier, result key), ``registry`` (classes by name, behind the
   policies' and the environments' registries), ``regimes`` (the names of the information regimes), ``novelty``
   (when a synthesized output is novel) and ``source_digest`` (the digest of the code a step runs, read from the
   package's sources): they import nothing else of ``hare``;
2. ``data``: the datasets, fetched and prepared;
3. ``envs``: the bandit environments;
4. ``model``: the building blocks the policies share;
5. ``policies``: the bandit policies and their registry;
6. ``report``: rendering of the numbers it is given (LaTeX tables and macros, Markdown, figures, notebooks, the PDF
   build); it imports the base only, and it is the only package that formats LaTeX;
7. ``experiments``: config -> jobs, running and simulating them, tables and macros from the run files, plans,
   benchmarks, and the config boundary that reads every config section into its settings (the ``theory``
   sections' too: :mod:`hare.experiments.settings`);
8. ``theory``: the bounds, the regret decomposition and its companion studies, the claims register;
9. ``cli`` (with ``__main__``): the command line, the only layer that may reach all the others.

``report`` sits below the layers that compute: they call it to render what they computed, and it never calls them
(computing modules return numbers, ``hare.report`` writes the text; it reads results as plain data, and the dataset
records of ``hare.data.registry`` for their display names). Theory uses
experiments, and experiments never use theory.
"""

__version__ = "0.1.0"
