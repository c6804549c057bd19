"""The statistical analysis of exported study data: causal excursion effects of decision points
(WCLS and EMEE), read from a data frame shaped like an export, never from the store.

Owns: `excursion` (the estimators), `report` (one decision's analysis, as text and JSON).
May import: numpy, pandas, statsmodels (and scipy, which statsmodels is built on), `bot.core`.
"""
