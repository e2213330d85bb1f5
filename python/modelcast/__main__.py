"""``python -m modelcast ARGS`` runs the bundled binary, as the ``modelcast`` command does."""

from modelcast._binary import main

main()
