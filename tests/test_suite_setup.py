"""The suite's own set-up, as every worker sees it."""

import os
from pathlib import Path

from conftest import MACHINE_CACHE


def test_the_machine_cache_is_not_the_runs_own_cache():
    """What tests keep across runs (dsh's npm packages) goes to the user's cache, never to the directory
    this run points XDG_CACHE_HOME at (it is removed at the end: the packages were fetched again on every
    run, under xdist, whose workers import conftest after the run set the variable)."""
    runs_own = Path(os.environ["XDG_CACHE_HOME"])
    assert MACHINE_CACHE != runs_own and runs_own not in MACHINE_CACHE.parents
    assert not MACHINE_CACHE.name.startswith("dshctl-test-cache-"), MACHINE_CACHE  # not an xdist controller's either
