"""``python -m synthprobe.cli`` runs the same command line as ``python -m synthprobe`` and the
``synthprobe`` console script."""

from synthprobe.cli import main

raise SystemExit(main())
