"""What `pip install .` ships: every file the package reads besides its modules."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_data_file_of_the_package_is_declared_for_the_wheel():
    # the tests import dshctl from the checkout, so a data file missing from the wheel would pass them
    # all and fail only for users (the built-in price table once did)
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = {
        str(Path(package.replace(".", "/")) / name)
        for package, names in declared.items()
        for name in names
    }
    data = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "dshctl").rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc")
    }
    assert data <= shipped, f"not in [tool.setuptools.package-data]: {sorted(data - shipped)}"
