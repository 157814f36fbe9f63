"""How an item is put to a model, shared by the benchmarks: the ``loglik`` / ``letters`` /
``letterprob`` / ``free`` prompts of a multiple-choice item (:mod:`.protocols`) and how numbers
are written in an item's text (:mod:`.numformat`). (Its earlier name, ``synthprobe.tasks``,
answers for one release: :mod:`synthprobe.moved`.)"""
