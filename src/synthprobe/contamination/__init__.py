"""``synthprobe contamination``: were a task's items in a training corpus? (13-gram, 8-gram and
GPT-3's arithmetic search, one pass over the corpus, on one machine or on Ray Data)."""
