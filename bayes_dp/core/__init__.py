"""The vocabulary and its checks, the bottom layer of bayes_dp.

Counts, evidence groups, priors, likelihoods, the privacy region, thresholds, exceptions and
validation. Imports nothing else of bayes_dp.
"""
