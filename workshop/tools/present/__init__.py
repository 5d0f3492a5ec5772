"""`present`: the deck in RISE on a local JupyterLab, its server extension and the rehearsal."""
