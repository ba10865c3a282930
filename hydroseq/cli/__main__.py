from hydroseq.cli import main

raise SystemExit(main())
