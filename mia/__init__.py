"""Membership-inference attacks and canary audits that produce attack counts."""

from . import canary

__all__ = ["canary"]
