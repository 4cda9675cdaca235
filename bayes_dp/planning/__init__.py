"""The audit planner: predicted posteriors for designs before the audit is run."""
