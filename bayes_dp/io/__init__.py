"""Reading input files: one place for every format ``bayes_dp`` and ``bayes-dp`` take.

* :func:`detect_input` (``io/detect.py``): the one function that decides what a path is, with
  the layouts in :data:`LAYOUTS` (which tool wrote a result folder: ``mia.readers.detect_format``),
  and :func:`is_attack_results`, the signature of a privacy-estimates attack result (mia's
  reader takes it from here).
* Count files (``io/counts.py``): :func:`read_counts`, errors as :class:`InputError`.
* Gaussian-DP inputs (``io/gdp_files.py``): :func:`read_in_out_scores`, :func:`read_one_run`,
  :func:`read_scores`.
* What ``mia``'s own readers read (``io/foreign.py``): score matrices and the result folders of
  the LiRA reference code, Privacy Meter and privacy-estimates, through
  :func:`evidence_from_mia`, the only place ``bayes_dp`` imports ``mia`` (lazily).

The command line calls these; so can Python code. This layer sits below ``cli`` and above
the method families (it builds their evidence: :class:`~bayes_dp.OneRunCounts`).
"""

from bayes_dp.io.counts import InputError, read_counts
from bayes_dp.io.detect import LAYOUTS, detect_input, is_attack_results, is_attack_results_file
from bayes_dp.io.foreign import evidence_from_mia
from bayes_dp.io.gdp_files import read_in_out_scores, read_one_run, read_scores

__all__ = [
    "LAYOUTS",
    "InputError",
    "detect_input",
    "evidence_from_mia",
    "is_attack_results",
    "is_attack_results_file",
    "read_counts",
    "read_in_out_scores",
    "read_one_run",
    "read_scores",
]
