import sys

from memlint.frontends.cli import main

sys.exit(main())
