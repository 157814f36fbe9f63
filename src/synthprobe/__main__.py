"""``python -m synthprobe`` runs the same command line as the ``synthprobe`` console script."""

from synthprobe.cli import main

raise SystemExit(main())
