"""``python -m dshctl``: the console script."""

from dshctl.entry import main

main()
