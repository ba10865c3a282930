"""Write docs/configuration.md from the config models: python docs/make_config_reference.py [--check].

The page is rendered by :func:`hydroseq.config.reference.reference_page`; ``--check`` writes nothing and
exits 1 when the committed page differs (``tests/config/test_config_reference.py`` checks the same).
"""

import argparse
import sys
from pathlib import Path

from hydroseq.config.reference import reference_page

PAGE = Path(__file__).resolve().parent / "configuration.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is not what the models give")
    parser.add_argument("--out", type=Path, default=PAGE, help="where to write the page (default: %(default)s)")
    args = parser.parse_args(argv)
    page = reference_page()
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != page:
            print(f"{args.out} is out of date: run python docs/make_config_reference.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(page)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
