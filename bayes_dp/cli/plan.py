"""``bayes-dp plan``: its parser and the command (:func:`bayes_dp.plan_audit`)."""

from __future__ import annotations

from bayes_dp.cli.options import _add_prior_options, _number, _prior_from_args, _truth_value
from bayes_dp.cli.result import EXIT_STATUSES


def _add_plan_parser(sub, common) -> None:
    """Add the ``plan`` subcommand (:func:`bayes_dp.plan_audit` on the command line)."""
    p = sub.add_parser(
        "plan",
        parents=[common],
        help="predict what candidate audit designs will show, before running them",
        description="Simulate audits from a hypothesised eps and attack strength s for every "
        "design (BASES x N crossed) and print, per design, the median and 10-90% range of the "
        "credible interval's ends and width, the power to detect a violated --claim and the "
        "ceiling (the largest claim a perfect attack could refute). A hypothesised value "
        "(--eps, --mu, --s, --tau, --rho) may be a distribution, drawn anew for every "
        "simulated audit (the power is then the assurance): LO:HI (uniform), "
        "normal:MEAN,SD (normal cut to the option's range), or points V1,V2,... with "
        "optional weights V1@W1,V2@W2,...",
    )
    truth = p.add_mutually_exclusive_group(required=True)
    truth.add_argument(
        "--eps",
        type=_truth_value(0.0, low_open=True),
        help="hypothesised eps (at --delta): a number or a distribution (see above)",
    )
    truth.add_argument(
        "--mu",
        type=_truth_value(0.0, low_open=True),
        help="hypothesised GDP mu instead of eps (the plan is about eps at --delta)",
    )
    p.add_argument(
        "--s",
        type=_truth_value(0.0, 1.0, high_open=True),
        required=True,
        help="hypothesised attack strength s, in [0, 1)",
    )
    p.add_argument(
        "--likelihood",
        choices=["binomial", "bivariate_normal", "beta_binomial"],
        default="binomial",
        help="model of the counts (default binomial); the correlated ones need --tau (and "
        "--rho), which the planned audits take as known",
    )
    p.add_argument(
        "--tau",
        type=_truth_value(-1.0, 1.0, low_open=True, high_open=True),
        default=None,
        help="hypothesised tau of a correlated --likelihood",
    )
    p.add_argument(
        "--rho",
        type=_truth_value(-1.0, 1.0, low_open=True, high_open=True),
        default=None,
        help="hypothesised rho of --likelihood bivariate_normal",
    )
    p.add_argument(
        "--delta",
        type=_number(float, 0.0, 1.0, high_open=True),
        required=True,
        help="the known DP delta, in [0, 1)",
    )
    p.add_argument(
        "--bases",
        type=_number(int, 1),
        nargs="+",
        default=[1],
        metavar="B",
        help="challenge bases (default 1)",
    )
    p.add_argument(
        "--n",
        type=_number(int, 1),
        nargs="+",
        required=True,
        metavar="N",
        help="challenges per hypothesis on each base: shadow models, or canaries",
    )
    p.add_argument(
        "--claim",
        type=_number(float, 0.0, low_open=True),
        default=None,
        help="a claimed eps: report the power",
    )
    p.add_argument(
        "--level",
        type=_number(float, 0.0, 1.0, low_open=True, high_open=True),
        default=0.9,
        help="probability of the interval (default 0.9)",
    )
    p.add_argument(
        "--confidence",
        type=_number(float, 0.0, 1.0, low_open=True, high_open=True),
        default=0.95,
        help="posterior probability of eps > CLAIM that counts as detection (default 0.95)",
    )
    p.add_argument(
        "--reps", type=_number(int, 1), default=50, help="simulated audits per design (default 50)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_prior_options(
        p, "--prior-s-fixed", "the audit will fix s at this value instead of inferring it"
    )
    p.add_argument(
        "--cores", type=_number(int, 1), default=None, help="threads (default: all cores)"
    )
    p.add_argument("--plot", default=None, metavar="FILE", help="save the width/power figure")


def _plan(args, out, log) -> dict:
    """Run ``bayes-dp plan``: print the plan's table (or return it for ``--json``)."""
    import bayes_dp as bdp
    from bayes_dp import __version__

    prior = _prior_from_args(args)
    designs = [{"bases": b, "n": n, "level": args.level} for b in args.bases for n in args.n]
    log(f"planning {len(designs)} design(s) x {args.reps} simulated audits")
    truth = {"eps": args.eps} if args.eps is not None else {"mu": args.mu}
    truth["s"] = args.s
    truth.update({k: v for k, v in (("tau", args.tau), ("rho", args.rho)) if v is not None})
    plan = bdp.plan_audit(
        truth,
        designs,
        delta=args.delta,
        likelihood=args.likelihood,
        claim=args.claim,
        prior=prior,
        reps=args.reps,
        confidence=args.confidence,
        seed=args.seed,
        cores=args.cores,
    )
    log(f"done in {plan.seconds:.1f} s")
    failed = int(plan.table.failed.sum())
    if failed:
        log(f"warning: {failed} simulated audit(s) had no usable grid posterior (left out)")
    files = {"plot": None}
    if args.plot:
        import matplotlib.pyplot as plt

        ax = plan.plot(x="n" if len(args.bases) == 1 else "total")
        ax.figure.savefig(args.plot, dpi=120)
        plt.close(ax.figure)
        files["plot"] = str(args.plot)
        log(f"wrote {args.plot}")
    if not args.json:
        print(plan, file=out)
    return {
        "exit_status": 0,
        "exit_status_meaning": EXIT_STATUSES[0],
        **plan.to_dict(),
        "files": files,
        "versions": {"bayes-dp": __version__},
    }
