"""Model-based evidence that a benchmark measures what it claims: ``synthprobe validate``.

Parts (each optional in a run, each its own module):

* ``trained`` — the trained choices-only audit (:mod:`.trained`; on by default for a Deep Arithmark
  file of the release's families, run first, no model): adversaries of
  :mod:`synthprobe.metrics.choices_only` trained on the options of fresh builds, scored on a fresh
  audit build (the equivalence test at ± 2 points) and on the file (a Holm-corrected per-stratum
  screen), with planted leaks that must fail and a label-permuted null that must pass; the LoRA
  adversary below is the long-budget tier of the same question;
* ``adversary`` — a choices-only adversary: a causal LM fine-tuned (LoRA) on the endings alone of
  fresh-seed items, then scoring the file under test from its endings alone, at several training
  sizes; it passes when it stays within chance's interval at every size;
* ``controls`` — the same adversary on deliberately flawed builds (positive controls that must
  fail: land clearly above chance), so that a pass means something;
* ``learnability`` — the same model fine-tuned *with* the context: the file's score against
  training size, paired against the untrained model; ``leave_one_family_out`` — train on every
  family but one, test on that one;
* ``seeds`` — the score on K fresh full-size builds: mean, standard deviation and range, where the
  file's own figure falls, two models compared across the same seeds.

The results document gains a top-level ``validity`` section (``version`` 1); a document holding one
may have no models. ``model`` is null when no part used one (the trained audit alone). Rates are
fractions in [0, 1]. A *rate block* is
``{"n", "correct", "accuracy", "ci95": [lo, hi] | null, "p_vs_chance"}`` (Wilson interval, as the
score command's, and the two-sided exact binomial test against ``chance``)::

    "validity": {
      "version": 1,
      "file": {"path", "sha256", "n_items", "benchmark", "seed"?},
      "settings": {"seed", "sizes", "device", "dtype", "lora": {...}, "lr", "batch_size", ...,
                   "trained": bool, "trained_budget": "small" | "full" | null},
      "model": {"spec", "name", "fingerprint", "params"} | null,  # the model trained / scored
      "chance": 0.25,
      "trained"?: {... the report of synthprobe.benchmarks.deeparithmark.trained_audit.run: "adversaries",
        "test_sets": {"audit build", "file"} (per adversary its equivalence block, the "screen" rows,
        "status"), "controls": [{"name", "expect", "outcome", "as_expected", "adversaries", ...}],
        "verdict": {"status", "passes", "power", "text"}, "budget", "decoys", "seed", "builds",
        "stated_power", "seconds", "note"? ...},
      "adversary"?: {
        "input": "...",  "loss": "...", "train_seed", "train_items": N,
        "curve": [                                                # one point per training size
          {"size", **rate block, "within_chance": bool,
           "by_depth": {"2": rate block, ...}, "by_template": {"name": rate block, ...},
           "train": {"seconds", "tokens", "loss", "adapter_sha256"} | null}   # null at size 0
        ],
        "loss_curve": [[items_seen, mean loss over the last window], ...],
        "passes": bool, "verdict": "one sentence"
      },
      "controls"?: [
        {"name", "flaw": "what is wrong with the build", "n_items",
         "audit": {"passes": bool, "strategies": [{"name", "accuracy", "within"}]},
         "adversary": {... the adversary layout above, on the control build ...},
         "fails": bool}                                           # landed clearly above chance
      ],
      "power": {"has_power": bool | null, "verdict": "one sentence",
                "parts"?: {"trained": {...}, "adversary": {...}}},  # parts: when both ran (trained.combined_power)
      "learnability"?: {"input", "loss", "train_seed", "curve": [
          {"size", **rate block, "by_depth", "by_template", "train",
           "paired": {"vs_size": 0, "only_this", "only_other", "p"} | null}]},
      "leave_one_family_out"?: {"size", "folds": [
          {"family", "trained": rate block, "untrained": rate block,
           "paired": {"only_this", "only_other", "p"}}]},
      "seeds"?: {... see synthprobe.validity.seeds ...}
    }
"""
