"""Deep Arithmark's per-step probe (``synthprobe probe steps``), grouped in one place: the probes
built from an item's solution steps (:mod:`.build`), their scoring (:mod:`.score`), their figures
(:mod:`.metrics`) and their section of the report (:mod:`.report`)."""
