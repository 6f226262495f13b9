"""One request, in the order it runs: planning (which strategies, with what share of the
budget: `budget`), the executor (each strategy under its deadline, on `_threads`),
acceptance (each answer checked against the contract), fusion (the lists merged),
code questions (source first), packing (what fits the budget, at which depth: `variants`
reads the depths a node is stored at), rendering (the output format) and reporting (what
happened, for the caller).
"""
