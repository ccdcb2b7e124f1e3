"""The studies: runs beyond the job table, each answering one question of the paper. Convergence of the online
attention (:mod:`.convergence`), personalization (:mod:`.personalization`, its metrics in
:mod:`.personalization_metrics`), the cost model of every policy (:mod:`.cost_model`), the machine calibration
(:mod:`.calibration`), the benchmarks (:mod:`.bench`, :mod:`.bench_hare`, :mod:`.bench_neural`, their timing
statistics in :mod:`.timing`) and the CUDA agreement check (:mod:`.device_check`)."""
