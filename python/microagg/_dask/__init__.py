"""The Dask engine (docs/scaling.md#the-dask-engine), published as :mod:`microagg.dask`.

How it runs: the records are cut into parts of at most ``max_part`` records by Mondrian-V
cuts on the globally standardized values, exactly as ``microagg.anonymize(...,
max_part=...)`` cuts them; then one shuffle puts each part in one partition, where the Rust
core groups it. No step gathers the data set in one place: the input partitions are read by
the release only once the plan exists (never held while planning), and memory per worker is
O(partition size) plus Dask's own. A second shuffle then puts every record back in its input
partition, in its input position, with its index (``keep_order=True``, the default).

One idea a module:

* :mod:`.engine`: ``anonymize``, the arguments and the lazy graph;
* :mod:`.plan`: the planner, which finds the cut tree in passes over the data (every cut
  level is three passes returning per-part summaries);
* :mod:`.tree`: the plan it returns and how a record descends it;
* :mod:`.passes`: how a pass runs over every partition (cluster or local scheduler);
* :mod:`.blocks`: the per-partition steps of those passes;
* :mod:`.keys`: the sort keys (value, row id) of a cut;
* :mod:`.strata`: the strata, their sizes and the merge of small ones;
* :mod:`.part`: grouping one part with the whole file's scaling;
* :mod:`.release`: tagging, grouping and ordering the released records;
* :mod:`.summary`: records, groups and information loss of a computed release;
* :mod:`.mixed`: keys with categories (the embedding in the file's units).

Nothing here imports Dask at module level; ``import microagg`` never imports this package.
"""
