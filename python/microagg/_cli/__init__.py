"""The ``microagg`` command-line tool, one module per command (:mod:`.demo`,
:mod:`.anonymize`, :mod:`.assess`, :mod:`.dask` for ``anonymize --engine dask``), the parser
and entry point in :mod:`.main`, what commands share in :mod:`.common`, the roles of a
file's columns in :mod:`.columns`, reading and writing tables in :mod:`.tables` and the
rules for outputs in :mod:`.output`."""
