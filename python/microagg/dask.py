"""Anonymizing a Dask DataFrame: partitioned microaggregation past one machine
(docs/scaling.md#the-dask-engine).

Install with ``pip install "microagg[dask]"``. The result is lazy; computing it (or writing
it with ``to_parquet``) runs the whole pipeline on the Dask cluster::

    import dask.dataframe as dd
    import microagg.dask

    ddf = dd.read_parquet("census/")
    out = microagg.dask.anonymize(ddf, k=5, columns=["age", "income"], by="region")
    out.to_parquet("census_k5/")

Run it under ``if __name__ == "__main__":`` when it starts a ``distributed`` cluster in the
script (``Client()`` starts worker processes that import the script again); see
``examples/dask_anonymize.py``. The engine lives in :mod:`microagg._dask`.
"""

from __future__ import annotations

from ._dask.engine import anonymize
from ._dask.summary import Summary

__all__ = ["anonymize", "Summary"]
