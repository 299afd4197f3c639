import sys

from memlint.cli import main

sys.exit(main())
