"""``python -m hydroseq.cli``: the ``hydroseq`` command."""

from hydroseq.cli import main

raise SystemExit(main())
