"""Audits in one training run (Steinke et al. 2023): counts, bound and posterior."""
