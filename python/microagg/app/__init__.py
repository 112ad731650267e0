"""``microagg app``: a local web app (Shiny for Python) for the data steward who does not
write code: open a CSV or Parquet file, set the column roles, run one or several candidates,
read the verdict and the release report, pick and download the release with the command that
reproduces it (docs/app.md).

Needs the optional extra ``app`` (``pip install "microagg[app]"``). Only this package imports
Shiny; the library and the command line never do (the ``app`` command imports it when run).
The pieces that do not need Shiny (:mod:`.columns`, :mod:`.command`, :mod:`.job`) are
separate modules, so that the command line's rules are reused rather than restated.
"""
