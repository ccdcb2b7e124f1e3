"""The studies: runs beyond the job table, each answering one question of the paper. Convergence of the online
attention (:mod:`.convergence`), personalization (:mod:`.personalization`, its metrics in
:mod:`.personalization_metrics`), the cost model of every policy (:mod:`.cost_model`, its counts in
:mod:`.cost_schedule`, an entry measured in :mod:`.cost_measurement`, the prediction in :mod:`.cost_prediction`), the
machine calibration (:mod:`.calibration`), the benchmarks (:mod:`.bench`, LinUCB against its ceiling and peers in
:mod:`.bench_linucb`, :mod:`.bench_baselines`, :mod:`.bench_hare`, :mod:`.bench_neural`, their harness in
:mod:`.bench_harness` and timing statistics in :mod:`.timing`), the CUDA agreement check (:mod:`.device_check`), and
the studies of scale: HARE against the pool size per covariance kind (:mod:`.pool_scaling`) and every policy family's
cost growth (:mod:`.cost_growth`)."""
