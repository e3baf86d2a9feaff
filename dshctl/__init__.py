"""dshctl: read dsh (deepseek-harness) session logs.

The library API lives in the submodules; this package stays import-light so
``dshctl --help`` starts fast:

* :mod:`dshctl.source` — paths to physical lines (files, session dirs, roots, stdin, zstd).
* :mod:`dshctl.reader` — lines to the normalized event model (:func:`dshctl.reader.open_log`).
* :mod:`dshctl.stream`, :mod:`dshctl.assembler` — the compact assistant stream core.
* :mod:`dshctl.stats`, :mod:`dshctl.replay`, :mod:`dshctl.validate`, :mod:`dshctl.images` — the commands.
"""

__version__ = "0.1.0"
