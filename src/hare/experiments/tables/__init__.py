"""From run files to the plain data of the tables: summaries and hyperparameter choices (:mod:`.aggregate`), the
LNUCB-TA reproduction readings and verdicts (:mod:`.reproduction`), the numbers of the paper's macros
(:mod:`.paper_macros`). :mod:`hare.report` renders them."""
