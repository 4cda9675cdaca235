"""Install the mutation named by BAYES_DP_MUTATION in every Python process of a mutated run.

``tests/conftest.py`` puts this folder first on ``PYTHONPATH`` while a mutation is active
(``tests/_support/mutations.py``), so that worker processes (joblib's) break their posteriors
as the main process does. A ``sitecustomize`` that this one shadows is run first.
"""

import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_others = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _others)
if _spec is not None and _spec.loader is not None:
    _mod = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_mod)

if os.environ.get("BAYES_DP_MUTATION"):
    from tests._support.mutations import install_from_env

    install_from_env()
