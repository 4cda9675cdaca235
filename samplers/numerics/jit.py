"""The options every numba kernel of :mod:`samplers` is compiled with, defined once.

``cache``: compiled code is kept on disk; ``nogil``: the kernels release the GIL, so chains run
in threads; ``error_model="numpy"``: division by zero gives inf or nan as in numpy instead of
raising (the kernels test for them). No ``fastmath``: the draws for a seed depend on the order of
every floating-point operation.
"""

JIT = {"cache": True, "nogil": True, "error_model": "numpy"}
