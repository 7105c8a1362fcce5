import sys

from chapters.cli import main

sys.exit(main())
