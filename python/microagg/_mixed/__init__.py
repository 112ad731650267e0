"""Mixed quasi-identifiers: categories microaggregated together with the numbers.

A key that mixes numeric, nominal and ordinal columns (:mod:`.types`) is embedded in a numeric
matrix (:mod:`.embedding`) that ``microaggregate`` groups with any method, unchanged, or, for
exact MDAV, handed to the core as it is (:mod:`.native`: nominal columns as codes); each
group then releases the aggregation of its numeric columns (``aggregation=``, in their own
units) and, for its categorical columns (:mod:`.release`), the weighted mode of a nominal
column and the weighted median level of an ordinal one, or (``categorical_release="medoid"``)
every categorical value of its medoid, so that each released combination exists in the
original. Every row of a group agrees on the whole key: the release is k-anonymous over it.
:mod:`.workflow` runs these steps; :mod:`.frames` decides whether a frame's key is mixed and
:mod:`.flags` reads the command line's flags.
"""
