"""From the config to result files, in three rooms.

* Running (this package's modules): the config and its overlays (:mod:`.config`), read into the settings of every
  section, the ``theory`` sections' too, by the config boundary (:mod:`.settings`), the job table (:mod:`.plan`,
  :mod:`.grid`, its memory estimate :mod:`.memory`), a job's typed specification (:mod:`.job_spec`, read by
  ``hare run --job`` through :mod:`.job_boundary`), one job (:mod:`.run`, :mod:`.replay_job`, :mod:`.job_setup`)
  through the one round loop (:mod:`.simulation`), tuning (:mod:`.selection`, :mod:`.margins`), off-policy
  estimates (:mod:`.off_policy`) and the results manifest (:mod:`.manifest`).
* :mod:`.studies`: convergence, personalization, the cost model and cost growth, pool scaling, the calibration and
  the benchmarks.
* :mod:`.tables`: the plain data of the tables and macros, which :mod:`hare.report` renders.
"""
