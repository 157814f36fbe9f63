"""Perturbation twins: each item of a Deep Arithmark file told again with one controlled change.

A twin is the same drawn problem (the same numbers, names and story) passed through one of the
transforms a family registers with :func:`..base.twin` (:data:`..base.TWIN_KINDS`):

* ``irrelevant_clause`` — a sentence with a number that plays no part; one decoy is always the
  value obtained by using that number (:data:`..base.IRRELEVANT`);
* ``one_step_more`` — one extra dependent operation (depth + 1; depth-5 families have none, 5
  being the benchmark's deepest tier);
* ``reordered`` — the same operations told in another order;
* ``unit_change`` — the quantities in another unit, the answer converted.

A twin keeps its original's correct slot and answer rank, so a twin file keeps the balance of
the file it was made from; its decoys follow the same rules (:mod:`..checks`). Each twin names
its original in ``metadata.twin_of`` and its kind in ``metadata.twin_kind``.
"""
