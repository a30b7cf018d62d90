import sys

from toxlib.cli import main

sys.exit(main())
