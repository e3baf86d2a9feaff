"""One frozen options type per command, shared by the command line and programs.

========================  =====================
command                   options type
========================  =====================
``dshctl cat``            :class:`CatOptions`
``dshctl export``         :class:`ExportOptions`
``dshctl grep``           :class:`GrepOptions`
``dshctl help``           :class:`HelpOptions`
``dshctl images``         :class:`ImagesOptions`
``dshctl ls``             :class:`LsOptions`
``dshctl prices``         :class:`PricesOptions`
``dshctl replay``         :class:`ReplayOptions`
``dshctl sql``            :class:`SqlOptions`
``dshctl stats``          :class:`StatsOptions`
``dshctl validate``       :class:`ValidateOptions`
========================  =====================

How an option is declared, the base type and the rules the commands share: :mod:`.base`. The
``--since`` / ``--until`` window and its ``createdAt`` rule: :mod:`.window`. This package imports nothing
heavy: the command line builds its ``--help`` from it.
"""

from __future__ import annotations

from .base import Option, Options, chosen_log, chosen_logs
from .cat import CatOptions
from .export import ExportOptions, PricesOptions, SqlOptions
from .grep import GrepOptions
from .help import HelpOptions
from .images import ImagesOptions
from .ls import LsOptions
from .replay import ReplayOptions
from .stats import StatsOptions
from .validate import ValidateOptions

__all__ = [
    "CatOptions",
    "ExportOptions",
    "GrepOptions",
    "HelpOptions",
    "ImagesOptions",
    "LsOptions",
    "Option",
    "Options",
    "PricesOptions",
    "ReplayOptions",
    "SqlOptions",
    "StatsOptions",
    "ValidateOptions",
    "chosen_log",
    "chosen_logs",
]
