"""``dshctl images`` options."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from .base import JSON, NDJSON, PLAIN, TSV, PathOptions, option


class ImagesOptions(PathOptions):
    """``dshctl images``: the listing, or with ``out`` the extraction and its manifest."""

    json: bool = JSON.with_help("One JSON document (the listing, or the manifest with --out).")
    ndjson: bool = NDJSON.with_help("One JSON object per image.")
    plain: bool = PLAIN
    tsv: bool = TSV
    out: Path | None = option(
        None, "--out", metavar="DIR", convert=Path,
        help="Extract the images into this directory, named after their original file names (ci-failure.png) when the "
        "log has them, never over other bytes (name-2.png).",
    )
    store: Path | None = option(
        None,
        "--store",
        metavar="DIR",
        convert=Path,
        help="Attachment store (default $DSH_HOME/attachments, else ~/.dsh/attachments), an export's media/ dir or "
        "its ZIP; without --out: every reference checked against it, or without PATH its objects verified and listed.",
    )
    name_template: str | None = option(
        None,
        "--name-template",
        metavar="TEMPLATE",
        help="Output file name template instead (default: the original name, else {seq}-{n}.{ext}); fields {seq} {n} "
        "{turn} {step} {ext} {hash} {name}, integers padded as {seq:06}.",
    )
    force: bool = option(False, "--force", help="Overwrite existing output files.")
    all: bool = option(False, "--all", help="Write every reference, not each distinct image once.")

    @property
    def out_directory(self) -> str:
        """What ``--out`` holds (a directory: never ``-``)."""
        return "the images and their manifest"

    def __post_init__(self) -> None:
        super().__post_init__()
        from ..images.extract import DEFAULT_TEMPLATE, NameTemplate

        if self.out is None:
            extraction = [self.fields[name].long for name in ("name_template", "force", "all")
                          if getattr(self, name) != self.fields[name].default]
            if extraction:
                verb = "applies" if len(extraction) == 1 else "apply"
                raise UsageError(f"{' and '.join(extraction)} only {verb} with --out DIR")
        self._derive(template=NameTemplate(self.name_template if self.name_template is not None else DEFAULT_TEMPLATE))
