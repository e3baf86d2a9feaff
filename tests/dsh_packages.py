"""dsh's released session-format packages, for the differential check (tests/test_validate_dsh_agreement.py).

The exact versions FORMAT.md §0 cites for validate's codec and relationship levels, fetched from the
npm registry with npm (``npm pack``) and checked against the sha1 and sha512 the registry publishes for
them (``dist.shasum``, ``dist.integrity``, pinned below as published): the registry's metadata must still
say so when a package is fetched, and the tarball must match before it is unpacked. Tarballs and the
unpacked layout stay in a cache, so a later run reads no network.

    python3 tests/dsh_packages.py [CACHE]

prints the directory to give as ``DSHCTL_DSH_PACKAGES`` (one unpacked package per directory); CACHE
defaults to ``$XDG_CACHE_HOME/dshctl`` (``~/.cache/dshctl``). Standard library only: .ci/run runs it with
the machine's python3 before the test environment exists.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

# directory: (npm package, exact version, dist.shasum, dist.integrity)
PACKAGES = {
    "dsh-session-format": ("@deepseek-ai/dsh-session-format", "0.1.3-alpha.2", "caec4ffad22d598338991b6df4e1b628e7d16269",
                           "sha512-LZRcjnK0dIii/f5nj/6Qfh9EfXvMBOBKBBHu3WcBZVllVwUIMn5UbenKMtt9XSKCLr7QX7aK7bumtwbmp8zlqA=="),
    "dsh-session-format-v0-to-v1": ("@deepseek-ai/dsh-session-format-v0-to-v1", "0.1.3-alpha.2", "20db26badd9b221e054708128a3511cff77145c6",
                                    "sha512-Mf1E99vBjaU4rQrojs9DEwYP/EtqKdUmcVMk6vC5+P1YMa1ZDJqqOxzNt7UzCfpf6fAx0kp0KrtJZOXGQzmqZw=="),
    "dsh-session-format-v1-to-v2": ("@deepseek-ai/dsh-session-format-v1-to-v2", "0.1.3-alpha.2", "9c829a5848901525ab0c49105513bbc8390ac465",
                                    "sha512-31pJIF0tOWkEXvKijuZs4mODlhVm2DzjFbJ4DZc9N5zuWJUXdvKKvZdSc84EVZ9b3AWyuqtxpUHK+9gM2Ds0Ew=="),
    "dsh-session-format-v2-to-v3": ("@deepseek-ai/dsh-session-format-v2-to-v3", "0.1.5-alpha.1", "eefda97cac55af392ba0877d3fb294e895a0ed69",
                                    "sha512-KSfzJXnOuumtv1T/mXSKGTp/JiZ3R5rrkdE33u1yyrvywWQ5TzyI3lEGIU7mIooRrpymJscv7HxYaijeFoZd8g=="),
    # the newest published (the format packages ask for ^0.1.3-alpha.2, which was never published)
    "dsh-util-values": ("@deepseek-ai/dsh-util-values", "0.1.2-alpha.2", "35822eb0db7ec655a0fa97396ac7f6f3bebc0442",
                        "sha512-ZyZHTqGQ/8S5ZYflTkuiZGPxhkuHa9Uy5G+teEmnmnkhiN/UVPGQvI//CXRNmxpTKjfx+qcVVmr5x6bohplsQg=="),
}
NPM_QUIET = ["--no-update-notifier", "--no-fund", "--no-audit", "--loglevel=error",
             "--fetch-retries=1", "--fetch-timeout=30000"]  # a registry that hangs fails in about a minute, not ten


class FetchError(RuntimeError):
    """The packages could not be had, or do not match their published checksums."""


def default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dshctl"


def _digests(data: bytes) -> tuple[str, str]:
    return hashlib.sha1(data).hexdigest(), "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def _npm(*args: str, cwd: Path) -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise FetchError("npm is not installed: it fetches dsh's packages from the npm registry")
    done = subprocess.run([npm, *args, *NPM_QUIET], cwd=cwd, capture_output=True, text=True, timeout=90)
    if done.returncode != 0:
        raise FetchError(f"npm {' '.join(args)} failed: {done.stderr.strip()[-1000:]}")
    return done.stdout


def _published(spec: str, work: Path) -> tuple[str, str]:
    dist = json.loads(_npm("view", spec, "dist", "--json", cwd=work))
    return dist["shasum"], dist["integrity"]


def _tarball(name: str, tarballs: Path) -> bytes:
    """The package's tarball, from the cache or fetched, matching its pinned checksums."""
    package, version, shasum, integrity = PACKAGES[name]
    spec = f"{package}@{version}"
    path = tarballs / f"{name}-{version}.tgz"
    if path.exists():
        data = path.read_bytes()
        if _digests(data) == (shasum, integrity):
            return data
    tarballs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tarballs) as work:
        published = _published(spec, Path(work))
        if published != (shasum, integrity):
            raise FetchError(f"the npm registry publishes {spec} as {published}, not the pinned {(shasum, integrity)}")
        [packed] = json.loads(_npm("pack", spec, "--json", "--pack-destination", work, cwd=Path(work)))
        data = (Path(work) / packed["filename"]).read_bytes()
        if _digests(data) != (shasum, integrity):
            raise FetchError(f"the tarball fetched for {spec} does not match its published shasum and integrity")
        os.replace(Path(work) / packed["filename"], path)
    return data


def _unpack(data: bytes, into: Path) -> None:
    """The tarball's ``package/`` directory as ``into``: its regular files only, each inside it."""
    with tempfile.TemporaryDirectory(dir=into.parent) as work:
        package = Path(work) / "package"
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive:
                parts = Path(member.name).parts
                if not member.isfile() or len(parts) < 2 or parts[0] != "package" or ".." in parts:
                    continue
                target = package.joinpath(*parts[1:])
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.extractfile(member).read())
        os.replace(package, into)


def ensure(cache: Path | None = None) -> Path:
    """The unpacked packages (``DSHCTL_DSH_PACKAGES``'s layout) under ``cache``, fetched the first time."""
    cache = cache or default_cache()
    pins = hashlib.sha1(json.dumps(PACKAGES, sort_keys=True).encode()).hexdigest()[:12]
    root = cache / "dsh-packages" / pins
    if all((root / name / "package.json").is_file() for name in PACKAGES):
        return root
    root.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        if not (root / name / "package.json").is_file():
            data = _tarball(name, cache / "dsh-packages" / "tarballs")
            try:
                _unpack(data, root / name)  # one rename: a package directory is never half there
            except OSError:
                if not (root / name / "package.json").is_file():  # unless another run unpacked it meanwhile
                    raise
    return root


if __name__ == "__main__":
    try:
        print(ensure(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
    except FetchError as error:
        sys.exit(f"dsh_packages: {error}")
