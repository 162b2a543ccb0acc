"""Allow ``python -m paqad``."""

from paqad.cli.main import main

raise SystemExit(main())
