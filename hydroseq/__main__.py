"""``python -m hydroseq``: the ``hydroseq`` command."""

from hydroseq.cli import main

raise SystemExit(main())
