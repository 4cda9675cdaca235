"""Option types and shared option groups of ``bayes-dp``.

Numbers checked at parse time (usage errors, exit 2, naming the option), hypothesised values
for ``plan``, and the sampler and prior options derived from :mod:`bayes_dp.inference.settings`
and :class:`bayes_dp.Prior`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math

import numpy as np

from bayes_dp.inference.settings import SAMPLER_CLASSES, option_name, parse_field


def _number(kind, low, high=None, low_open=False, high_open=False):
    """Return an argparse ``type`` that parses ``kind`` and checks its range at parse time.

    A value out of range is a usage error (exit status 2) naming the option, before anything
    is read or sampled; the range is written as an interval, e.g. ``[0, 1)``.
    """
    what = "an integer" if kind is int else "a number"
    lo_txt, hi_txt = f"{low:g}", f"{high:g}" if high is not None else ""
    if high is None:
        rng = f"{'>' if low_open else '>='} {lo_txt}"
    else:
        rng = f"in {'(' if low_open else '['}{lo_txt}, {hi_txt}{')' if high_open else ']'}"

    def parse(text: str):
        try:
            val = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, found {text!r}") from None
        if kind is float and not math.isfinite(val):
            raise argparse.ArgumentTypeError(f"must be finite, found {text!r}")
        if (val < low or (low_open and val == low)) or (
            high is not None and (val > high or (high_open and val == high))
        ):
            raise argparse.ArgumentTypeError(f"must be {rng}, found {text!r}")
        return val

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def _truth_value(low, high=None, low_open=False, high_open=False):
    """Return an argparse ``type`` for a hypothesised value of ``bayes-dp plan``.

    ``V`` (a number), ``LO:HI`` (uniform), ``normal:MEAN,SD`` (normal cut to the range) or
    ``V1,V2,...`` / ``V1@W1,V2@W2,...`` (points, equally likely or with weights): a float or a
    scipy distribution, as :func:`bayes_dp.plan_audit` takes them. Values out of the range
    are usage errors naming the option.
    """
    number = _number(float, low, high, low_open, high_open)

    def parse(text: str):
        from scipy import stats

        text = text.strip()
        if text.startswith("normal:"):
            parts = text[len("normal:") :].split(",")
            if len(parts) != 2:
                raise argparse.ArgumentTypeError(f"expected normal:MEAN,SD, found {text!r}")
            mean = _number(float, -math.inf)(parts[0])
            sd = _number(float, 0.0, low_open=True)(parts[1])
            a, b = (low - mean) / sd, (math.inf if high is None else high - mean) / sd
            if stats.norm.cdf(b) - stats.norm.cdf(a) < 1e-6:
                raise argparse.ArgumentTypeError(f"{text!r} puts no mass in the allowed range")
            return stats.truncnorm(a, b, loc=mean, scale=sd)
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 2:
                raise argparse.ArgumentTypeError(f"expected LO:HI, found {text!r}")
            lo, hi = number(parts[0]), number(parts[1])
            if not lo < hi:
                raise argparse.ArgumentTypeError(f"LO:HI needs LO < HI, found {text!r}")
            return stats.uniform(lo, hi - lo)
        if "," in text or "@" in text:
            items = [x.split("@") for x in text.split(",")]
            if any(len(x) > 2 for x in items) or len({len(x) for x in items}) > 1:
                raise argparse.ArgumentTypeError(
                    f"expected V1,V2,... or V1@W1,V2@W2,... (all with weights or none), "
                    f"found {text!r}"
                )
            values = [number(x[0]) for x in items]
            weights = [
                _number(float, 0.0, low_open=True)(x[1]) if len(x) == 2 else 1.0 for x in items
            ]
            if len(set(values)) < len(values):
                raise argparse.ArgumentTypeError(f"points must be distinct, found {text!r}")
            return stats.rv_discrete(values=(values, np.array(weights) / sum(weights)))
        return number(text)

    parse.__name__ = "distribution"
    return parse


def _add_sampler_options(p) -> None:
    """Add ``--sampler`` and one option per field of the settings classes, typed and checked.

    The options are derived from the fields of :data:`bayes_dp.inference.settings.SAMPLER_CLASSES`
    (one declaration): a value the class refuses is a usage error (exit status 2) naming the
    option; an option of the other sampler is refused by :func:`_check_sampler_args`.
    """

    def parser(cls, name):
        def parse(text: str):
            try:
                return parse_field(cls, name, text)
            except ValueError as e:
                raise argparse.ArgumentTypeError(str(e)) from None

        parse.__name__ = type(getattr(cls, name)).__name__  # argparse names it in its messages
        return parse

    names = list(SAMPLER_CLASSES)
    p.add_argument(
        "--sampler",
        choices=names,
        default=names[0],
        help=f"the sampler (default {names[0]}: the exact sampler; mhaar: the paper's MHAAR; "
        "docs/validation/model.md)",
    )
    owners: dict[str, list] = {}
    for cls in SAMPLER_CLASSES.values():
        for f in dataclasses.fields(cls):
            owners.setdefault(f.name, []).append(cls)
    for name, classes in owners.items():
        f = {f.name: f for f in dataclasses.fields(classes[0])}[name]
        which = "" if len(classes) == len(names) else f"--sampler {classes[0].method} only; "
        p.add_argument(
            option_name(name),
            dest=name,
            type=parser(classes[0], name),
            default=None,
            metavar=name.upper(),
            help=f"{f.metadata['help']} ({which}default {f.default!r})",
        )


def _check_sampler_args(args) -> str | None:
    """Return why the sampler options of ``args`` do not fit ``--sampler``, or None."""
    cls = SAMPLER_CLASSES[args.sampler]
    own = {f.name for f in dataclasses.fields(cls)}
    every = {f.name for c in SAMPLER_CLASSES.values() for f in dataclasses.fields(c)}
    other = sorted(n for n in every - own if getattr(args, n, None) is not None)
    if other:
        opts = ", ".join(option_name(n) for n in other)
        return f"{opts}: option(s) of another sampler, not of --sampler {args.sampler}"
    if args.sampler != "exact" and getattr(args, "max_time", None) is not None:
        return (
            "--max-time: the time budget is the exact sampler's; "
            f"--sampler {args.sampler} runs a fixed length (--draws)"
        )
    return None


def _sampler_from_args(args):
    """Return the settings object that ``--sampler`` and its options give."""
    cls = SAMPLER_CLASSES[args.sampler]
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in given.items() if v is not None})


def _add_prior_options(p, fixed_flag: str, fixed_help: str) -> None:
    """Add --prior-eps-scale and, mutually exclusive, ``fixed_flag`` (s fixed), --prior-s-beta."""
    p.add_argument(
        "--prior-eps-scale",
        type=_number(float, 0.0, low_open=True),
        default=10.0,
        metavar="X",
        help="scale of the HalfNormal prior of eps (default 10)",
    )
    s = p.add_mutually_exclusive_group()
    s.add_argument(
        fixed_flag,
        type=_number(float, 0.0, 1.0),
        default=None,
        metavar="FIXED",
        dest="s_fixed",
        help=fixed_help,
    )
    s.add_argument(
        "--prior-s-beta",
        type=_number(float, 0.0, low_open=True),
        nargs=2,
        default=None,
        metavar=("A", "B"),
        help="Beta(A, B) prior of s (default 1 1)",
    )


def _prior_from_args(args):
    """Return the :class:`~bayes_dp.Prior` of the options of :func:`_add_prior_options`."""
    import bayes_dp as bdp

    if args.s_fixed is not None:
        s_prior = args.s_fixed
    else:
        s_prior = bdp.Beta(*(args.prior_s_beta or (1.0, 1.0)))
    return bdp.Prior(eps=bdp.HalfNormal(args.prior_eps_scale), s=s_prior)
