"""``python -m lsp_server`` is the ``redraft`` command (``serve`` when given no command)."""

import sys

from lsp_server.cli import main

sys.exit(main(sys.argv[1:] or ["serve"]))
