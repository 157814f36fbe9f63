"""``synthprobe sweep``: grids of (model × task × seed) scoring jobs, run as Ray tasks or
serially, merged into one results document. Sits above the apps (it runs ``scoring`` jobs and
may write a ``report``); Ray is imported only when a sweep runs on it."""
