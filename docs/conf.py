"""Sphinx configuration of the bayes-dp documentation.

Build (after ``pip install -e ".[docs]"``), from the repository root::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Warnings are errors, cross-references are checked (``nitpicky``: every reference to an object of
``bayes_dp``, ``mia`` or ``samplers`` must resolve; references to other packages are not
checked, since the build reads no inventory over the network), and MyST checks every internal
link and heading anchor. The tables of the ``--json`` and netCDF fields are written at build
time from ``bayes_dp.cli.schema`` (into ``reference/_generated/``, not tracked).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # the checkout's packages, also without an installed copy
sys.path.insert(0, str(DOCS))

import bayes_dp  # noqa: E402

project = "bayes-dp"
author = "the bayes-dp authors"
copyright = "the bayes-dp authors"  # noqa: A001
release = bayes_dp.__version__ if hasattr(bayes_dp, "__version__") else "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinxarg.ext",
    "sphinx_ext",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "**/_generated/*", "update_readme.py", "make_figures.py"]

# --- checks -------------------------------------------------------------------------------
nitpicky = True
# Only the project's own objects are checked: no inventories of numpy, scipy, pandas, ... are
# fetched (the build runs without network), so their names cannot resolve.
# Private names (a part starting with "_") are not documented, by design.
nitpick_ignore_regex = [
    (r"py:.*", r"(?!(bayes_dp|mia|samplers)\b).*"),
    (r"py:.*", r".*\._\w+.*"),
]
# "more than one target found": a re-exported object (bayes_dp.Posterior) is documented under
# its public name and its module's; either target is right
suppress_warnings = ["ref.python"]

# numpydoc reads the docstrings of names a module imports from numba, written in another style
warnings.filterwarnings("ignore", "Unknown section", UserWarning, "numpydoc")

# --- MyST ---------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 4  # links to sections by their slug: [text](page.md#a-heading)

# --- autodoc and numpydoc -----------------------------------------------------------------
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_mock_imports = ["torch", "opacus", "flwr", "ray", "distributed", "dask"]
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# --- HTML ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "bayes-dp"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "navbar_align": "left",
}
html_show_sourcelink = False
