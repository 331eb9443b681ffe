import sys

from ._cli import serve

sys.exit(serve())
