"""Membership-inference attacks and canary audits that produce attack counts."""
