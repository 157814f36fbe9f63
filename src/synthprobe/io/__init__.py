"""File helpers, one module per job:

* :mod:`synthprobe.io.write`: atomic writes and the output rules of every command;
* :mod:`synthprobe.io.read`: the strict JSON decoder, the JSONL reader, file digests;
* :mod:`synthprobe.io.paths`: default output names and the files shipped with the package.
"""
