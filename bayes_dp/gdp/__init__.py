"""The Gaussian-DP (whole-ROC) posterior from attack scores, alone or with other evidence."""
