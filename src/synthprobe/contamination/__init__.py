"""``synthprobe contamination``: were a task's items in a training corpus? (13-gram, 8-gram and
GPT-3's arithmetic search, one pass over the corpus, on one machine or on Ray Data)."""

#: a shard of a text or JSONL file (bytes); Parquet shards are row groups
DEFAULT_SHARD_BYTES = 64 << 20
#: a JSONL record longer than this is skipped and listed, not parsed (bytes)
DEFAULT_MAX_RECORD_BYTES = 16 << 20
