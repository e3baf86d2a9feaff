"""The compiled build (#25): ``pip install .`` compiles dshctl's hot modules (``COMPILED`` below) with mypyc
from the same typed source, so every rule keeps its one home in the ``.py`` file; the wheel ships both, and
Python imports the extension before the source beside it. mypy (which brings mypyc) is a build
requirement, fetched by pip like any other; where mypyc cannot compile (no C compiler, no Python headers,
a module that stops type-checking) the install goes on with the pure-Python modules and says so in the
build output (``pip install -v``); nothing warns at run time. ``dshctl --version`` says which build runs.

``DSHCTL_PURE=1 pip install .`` skips the compiler. An editable install (``pip install -e .``) is always
pure: the source being edited is what runs. Everything else is in pyproject.toml.
"""

import os
import sys
import traceback

from setuptools import setup
from setuptools.command.build_ext import build_ext

# The hot reading path, chosen by measurement (benchmarks/README.md): the zstd frame walk and the line
# reader (one native class hierarchy: they compile together or not at all), the v0 decoder and the stats
# fold. The stream core and the reader type-check and their Structs are apart, but compiled they measured
# no gain (the stream: fewer instructions per run, more at start-up) and mypyc 2.4 broke them (the
# stream's annotations enforced on raw JSON; the reader's dataclass fields with init=False left unset).
# What keeps them compilable (mypyc 2.4):
# - each type-checks cleanly, and an annotation is a promise the compiled code enforces (a TypeError at
#   the call): what a function refuses with its own error is typed Any (Accumulator.push);
# - msgspec Structs declared with class keywords (tag, kw_only, forbid_unknown_fields) stay in pure
#   modules the compiled ones import (dshctl/stream_records.py, dshctl/generations/v0_rows.py);
# - no class-body aliases or class attributes without ClassVar: mypyc makes them instance attributes
#   (``iter_lines = __iter__`` left a KeyError set, reported later as "'_Environ' object has no
#   attribute 'get'");
# - a class that pure code extends says so (mypyc_attr(allow_interpreted_subclasses=True):
#   FollowingLineReader, the replay builder's _Block), and tests inject by subclassing, never by
#   assigning a method (native attributes are read-only).
COMPILED = [
    "dshctl/source/zstd.py", "dshctl/source/lines.py", "dshctl/generations/v0.py", "dshctl/stats/fold.py", "dshctl/reader.py",
]

# The commands that build the wheel's modules; metadata commands (egg_info, dist_info) never compile.
BUILDING = {"bdist_wheel", "build", "build_ext", "install"}


def warn(message: str) -> None:
    print(f"dshctl: WARNING: {message}; installing the pure-Python modules (dshctl --version says so)", file=sys.stderr)


def compiled_extensions() -> list:
    if os.environ.get("DSHCTL_PURE") or not BUILDING & set(sys.argv[1:]):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        warn("mypyc is not installed")
        return []
    try:
        # the other modules they import are type-checked as far as the compiled ones use them (silent: their
        # own errors are not this build's), and the build environment has only the typed dependencies
        flags = ["--follow-imports=silent", "--ignore-missing-imports"]
        return mypycify([*flags, *COMPILED], opt_level="3", group_name="dshctl")
    except (Exception, SystemExit):  # mypy exits on a type error
        traceback.print_exc()
        warn("mypyc could not translate the hot modules")
        return []


class OptionalBuildExt(build_ext):
    """Builds the compiled modules all or none: a compiler or header missing leaves no extension in the
    wheel (a shim without its shared library would fail at import)."""

    def run(self) -> None:
        if self.inplace or getattr(self, "editable_mode", False):  # an editable install: the source tree must keep running its own .py files
            self.extensions = []
            return
        try:
            super().run()
        except Exception as error:  # CompileError, LinkError, a missing compiler: setuptools' own types vary
            warn(f"the C compiler failed ({error})")
            for output in self.get_outputs():
                if os.path.exists(output):
                    os.remove(output)
            self.extensions = []

    def get_outputs(self) -> list:
        return super().get_outputs() if self.extensions else []


setup(ext_modules=compiled_extensions(), cmdclass={"build_ext": OptionalBuildExt})
