import sys

from chapters.cli import main

if __name__ == "__main__":  # guarded: worker processes started with "spawn" import this module again
    sys.exit(main())
