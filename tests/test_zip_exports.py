"""What a colleague sends (issue 26): dsh's Web UI export, ``dsh-session-<id>.zip``, read in place.

The ZIP holds ``session.jsonl`` (the root, of any generation), ``subagents/<id>/session.jsonl`` and the
images under ``media/`` (FORMAT.md §1.10). Every PATH form takes it; members are streamed, never unpacked;
hostile archives are one clear error, status 2.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

import pytest
from conftest import SAMPLES, invoke as run_cli, sample

OBJECTS = sample("attachments/v1/objects")
PNG_ID = "a97eceb267d066482c42829cb5e07f971332113c46a19f731d2c82b9baaaa423"
JPG_ID = "2ae6300793ac5d4be7fa4b2b27e3991eb916b8ed6e666ef658fdae253596beaf"

def invoke(*args: str):
    return run_cli(*args, env={"COLUMNS": None, "DSH_HOME": "/nonexistent-dsh-home"})


def web_export(into: Path, root: str = "tour.session.v4.jsonl", *, method: int = zipfile.ZIP_DEFLATED) -> Path:
    """A ZIP laid out as dsh's Web UI exports a session, and the same files unzipped beside it."""
    members = {
        "session.jsonl": (SAMPLES / root).read_bytes(),
        "subagents/session-b4d2f6a8/session.jsonl": (SAMPLES / "fork-child.session.v4.jsonl").read_bytes(),
        f"media/sha256:{PNG_ID}.png": (OBJECTS / PNG_ID[:2] / PNG_ID).read_bytes(),
        f"media/sha256:{JPG_ID}.jpg": (OBJECTS / JPG_ID[:2] / JPG_ID).read_bytes(),
    }
    path = into / "dsh-session-7c1e5a2d.zip"
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    unzipped = into / "unzipped"
    for name, data in members.items():
        target = unzipped / name.replace(":", "_") if name.startswith("media/") else unzipped / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return path


@pytest.fixture
def export(tmp_path) -> Path:
    return web_export(tmp_path)


def test_stats_folds_root_and_subagents_as_the_unzipped_files(export):
    zipped = json.loads(invoke("stats", "--json", str(export)).stdout)
    unzipped = json.loads(invoke("stats", "--json", str(export.parent / "unzipped")).stdout)
    assert [s["path"] for s in zipped["sessions"]] == [f"{export}!session.jsonl", f"{export}!subagents/session-b4d2f6a8/session.jsonl"]
    for a, b in zip(zipped["sessions"], unzipped["sessions"]):
        assert {k: v for k, v in a.items() if k != "path"} == {k: v for k, v in b.items() if k != "path"}
    assert zipped["aggregate"] == unzipped["aggregate"]


def test_a_second_run_reads_the_members_again(export, tmp_path, monkeypatch):
    """The members of one archive share its file status: the stats and listing caches, keyed by it, must
    not answer one member with another's figures (the second run listed the subagent twice)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for command in (("stats", "--json"), ("ls", "--json")):
        first = invoke(*command, str(export))
        second = invoke(*command, str(export))
        assert first.exit_code == second.exit_code == 0, second.output
        assert second.stdout == first.stdout, command


@pytest.mark.parametrize("root", ["tour.session.jsonl", "tour.session.v2.jsonl", "tour.session.v3.jsonl", "tour.session.v4.jsonl",
                                  "tour.session.v4.jsonl.zstd"])
def test_the_root_of_any_generation_is_read_by_its_header(tmp_path, root):
    export = web_export(tmp_path, root)
    assert invoke("cat", str(export)).stdout == invoke("cat", str(SAMPLES / root)).stdout
    assert invoke("replay", "--instant", str(export)).stdout == invoke("replay", "--instant", str(SAMPLES / root)).stdout


def test_grep_and_validate_name_the_members(export):
    result = invoke("grep", "-c", "red", str(export))
    assert result.stdout.splitlines() == [f"{export}!session.jsonl:4", f"{export}!subagents/session-b4d2f6a8/session.jsonl:3"]
    checked = invoke("validate", str(export))
    assert checked.exit_code == 0, checked.output
    assert f"{export}!session.jsonl:49" in checked.stdout and "2 logs: 2 clean" in checked.stdout
    listed = json.loads(invoke("ls", "--json", str(export)).stdout)["sessions"]
    assert [row["id"][:8] for row in listed] == ["7c1e5a2d", "b4d2f6a8"] and listed[0]["bytes"] == (SAMPLES / "tour.session.v4.jsonl").stat().st_size


def test_images_finds_the_bytes_under_media_and_verifies_them(export, tmp_path):
    out = tmp_path / "out"
    result = invoke("images", str(export), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["store"] == {"kind": "zip", "path": str(export), "from": "export"}
    assert sorted(os.listdir(out)) == ["ci-failure.png", "pipeline.jpg"]
    assert (out / "ci-failure.png").read_bytes() == (OBJECTS / PNG_ID[:2] / PNG_ID).read_bytes()
    stored = json.loads(invoke("images", "--store", str(export), "--json").stdout)
    assert [(o["attachmentId"][7:], o["status"]) for o in stored["objects"]] == [(JPG_ID, "verified"), (PNG_ID, "verified")]


def test_a_tampered_image_in_the_zip_is_a_mismatch(tmp_path):
    export = web_export(tmp_path)
    data = {info.filename: zipfile.ZipFile(export).read(info) for info in zipfile.ZipFile(export).infolist()}
    data[f"media/sha256:{PNG_ID}.png"] = data[f"media/sha256:{PNG_ID}.png"][:-1] + b"\x00"
    with zipfile.ZipFile(export, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, value in data.items():
            archive.writestr(name, value)
    result = invoke("images", str(export), "--out", str(tmp_path / "out"), "--json")
    assert result.exit_code == 1
    assert {r["status"] for r in json.loads(result.stdout)["images"] if r["attachmentId"].endswith(PNG_ID)} == {"mismatch", "duplicate"}


def test_nothing_is_unpacked_to_disk(export, monkeypatch):
    """Members are read through zipfile's streams: no ZipFile.extract, no temporary file."""
    monkeypatch.setattr(zipfile.ZipFile, "extract", lambda *a, **k: pytest.fail("extracted"))
    monkeypatch.setattr(zipfile.ZipFile, "extractall", lambda *a, **k: pytest.fail("extracted"))
    import tempfile

    monkeypatch.setattr(tempfile, "mkstemp", lambda *a, **k: pytest.fail("a temporary file"))
    assert invoke("stats", "--json", str(export)).exit_code == 0
    assert invoke("cat", str(export)).exit_code == 0


def test_a_plain_folder_reads_the_exports_it_holds(export, tmp_path):
    folder = tmp_path / "downloads"
    folder.mkdir()
    shutil.copy(export, folder / "bug-report.zip")
    with zipfile.ZipFile(folder / "photos.zip", "w") as other:  # not a dsh export: passed over
        other.writestr("a.txt", "x")
    shutil.copy(SAMPLES / "cwd-change.session.v4.jsonl", folder)
    paths = [s["path"] for s in json.loads(invoke("stats", "--json", str(folder)).stdout)["sessions"]]
    assert paths == [f"{folder}/bug-report.zip!session.jsonl", f"{folder}/bug-report.zip!subagents/session-b4d2f6a8/session.jsonl",
                     f"{folder}/cwd-change.session.v4.jsonl"]


def test_a_zip_without_session_jsonl_is_not_an_export(tmp_path):
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "hello")
    result = invoke("stats", str(path))
    assert result.exit_code == 2 and "not a dsh session export" in result.stderr


def test_follow_refuses_an_export(export):
    result = invoke("cat", "-f", str(export))
    assert result.exit_code == 2 and "not a session export ZIP" in result.stderr


# -------------------------------------------------------------------------------------------- hostile


def _raw_zip(path: Path, entries: list[tuple], *, flags: int = 0) -> Path:
    """A ZIP written by hand: ``(name, data)`` or ``(name, data, declared size)`` or ``(name, data,
    declared size, stored bytes)`` per member, deflated, with the CRC of ``data``."""
    local, central, offset = b"", b"", 0
    for entry in entries:
        name, data = entry[0], entry[1]
        size = entry[2] if len(entry) > 2 else len(data)
        stored = entry[3] if len(entry) > 3 else _deflated(data)
        crc = zlib.crc32(data)
        encoded = name.encode()
        header = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, 8, 0, 0, crc, len(stored), size, len(encoded), 0)
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, flags, 8, 0, 0, crc, len(stored), size,
                               len(encoded), 0, 0, 0, 0, 0, offset) + encoded
        local += header + encoded + stored
        offset += len(header) + len(encoded) + len(stored)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), offset, 0)
    path.write_bytes(local + central + end)
    return path


def _deflated(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def _assert_refused(path: Path, message: str) -> None:
    for command in (["stats"], ["cat"], ["validate"], ["grep", "x"], ["images"], ["ls"]):
        result = invoke(*command, str(path))
        assert result.exit_code == 2, (command, result.output)
        if command == ["validate"]:  # validate reports an unreadable log as a finding, as for every cause
            assert "unreadable [codec/read]" in result.stdout and message in result.stdout, result.stdout
            continue
        lines = result.stderr.splitlines()
        assert lines and lines[-1].startswith("dshctl: error: ") and message in lines[-1], (command, result.stderr)
        assert "Traceback" not in result.output


def test_an_absolute_member_name_is_refused(tmp_path):
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    path = _raw_zip(tmp_path / "a.zip", [("session.jsonl", log), ("/etc/cron.d/x", b"x")])
    _assert_refused(path, "is absolute")


def test_a_member_climbing_out_is_refused(tmp_path):
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    path = _raw_zip(tmp_path / "a.zip", [("session.jsonl", log), ("media/../../x.png", b"x")])
    _assert_refused(path, "climbs out with '..'")


def test_duplicate_names_are_refused(tmp_path):
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    other = (SAMPLES / "cwd-change.session.v4.jsonl").read_bytes()
    path = _raw_zip(tmp_path / "a.zip", [("session.jsonl", log), ("session.jsonl", other)])
    _assert_refused(path, 'two members named "session.jsonl"')


@pytest.mark.parametrize(
    "first, second",
    [
        ("session.jsonl", "./session.jsonl"),
        ("./session.jsonl", "session.jsonl"),
        ("subagents/a/session.jsonl", "subagents/a//session.jsonl"),
        ("subagents/a/session.jsonl", "subagents/./a/session.jsonl"),
        ("subagents/a/session.jsonl", "subagents\\a\\session.jsonl"),  # backslashes, as the '..' check reads them
    ],
)
def test_one_name_spelled_twice_is_refused(tmp_path, first, second):
    """Two spellings of one path are two members of one name (unzipped, one overwrites the other): which is
    the log is not known, so the archive is refused, never one of them read silently."""
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    other = (SAMPLES / "cwd-change.session.v4.jsonl").read_bytes()
    members = [(first, log), (second, other)]
    if "session.jsonl" not in (first, second):
        members.insert(0, ("session.jsonl", log))
    path = _raw_zip(tmp_path / "a.zip", members)
    _assert_refused(path, "two members named")
    result = invoke("stats", str(path))
    assert f'"{first}" and "' in result.stderr and "(one name spelled twice)" in result.stderr


def test_names_differing_in_case_are_two_members(tmp_path):
    """ZIP names are case-sensitive and dsh writes lowercase ones: ``Session.jsonl`` is not the log."""
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    path = _raw_zip(tmp_path / "a.zip", [("session.jsonl", log), ("Session.jsonl", b"x")])
    result = invoke("stats", "--json", str(path))
    assert result.exit_code == 0, result.output
    assert [s["path"] for s in json.loads(result.stdout)["sessions"]] == [f"{path}!session.jsonl"]


def test_a_zip_bomb_is_refused_before_inflating(tmp_path):
    path = _raw_zip(tmp_path / "bomb.zip", [("session.jsonl", b"\n" * (64 << 20))])  # 64 MiB in about 64 KiB: over 200:1
    _assert_refused(path, "a zip bomb")


def test_a_member_lying_about_its_size_inflates_no_further(tmp_path):
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    path = _raw_zip(tmp_path / "liar.zip", [("session.jsonl", log, 1000)])
    result = invoke("cat", str(path))
    assert result.exit_code == 2 and result.stderr.startswith("dshctl: error: ")
    assert len(result.stdout) < 1000 + 2000  # at most what was declared was read (plus the JSON of those lines)


def test_overlapping_members_are_refused(tmp_path):
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    stored = _deflated(log)
    name = b"session.jsonl"
    header = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0, 0, len(stored), len(log), len(name), 0)
    local = header + name + stored
    central = b""
    for member in (b"session.jsonl", b"subagents/x/session.jsonl"):  # both point at the one stored run
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, 0, len(stored), len(log),
                               len(member), 0, 0, 0, 0, 0, 0) + member
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 2, 2, len(central), len(local), 0)
    path = tmp_path / "overlap.zip"
    path.write_bytes(local + central + end)
    _assert_refused(path, "share stored bytes")


def test_a_sound_hand_made_zip_reads(tmp_path):
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    path = _raw_zip(tmp_path / "fine.zip", [("session.jsonl", log)])
    assert invoke("cat", str(path)).stdout == invoke("cat", str(SAMPLES / "tour.session.v4.jsonl")).stdout


def test_a_damaged_member_is_an_error_naming_it(tmp_path):
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    stored = bytearray(_deflated(log))
    stored[len(stored) // 2] ^= 0xFF
    path = _raw_zip(tmp_path / "damaged.zip", [("session.jsonl", log, len(log), bytes(stored))])
    result = invoke("stats", str(path))
    assert result.exit_code == 2 and "damaged.zip!session.jsonl" in result.stderr and "Traceback" not in result.output


def test_an_encrypted_member_is_refused(tmp_path):
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    path = _raw_zip(tmp_path / "locked.zip", [("session.jsonl", log)], flags=0x1)
    _assert_refused(path, "is encrypted")


def test_member_names_in_errors_are_shown_by_the_one_picture_rule(tmp_path):
    """A member name is text from the archive: quoted, its controls shown as pictures (␛) on a terminal
    and kept exact in JSON, as any log text is (:mod:`dshctl.textsafe`); never Python's escapes
    (``'media/../a\\x1bb.png'``)."""
    log = (SAMPLES / "tour.session.v4.jsonl").read_bytes()
    path = _raw_zip(tmp_path / "a.zip", [("session.jsonl", log), ("media/../a\x1bb\u00e9.png", b"x")], flags=0x800)  # UTF-8 names
    _assert_refused(path, "ZIP member name \"media/../a\u241bb\u00e9.png\" climbs out with '..'")
    for command in (["stats"], ["cat"], ["ls"]):
        assert "\\x1b" not in invoke(*command, str(path)).stderr
    document = json.loads(invoke("validate", "--format", "json", str(path)).stdout)
    assert document["logs"][0]["findings"][0]["message"].startswith("ZIP member name \"media/../a\x1bb\u00e9.png\"")
    unknown = invoke("cat", f"{path}!sub\x1bagents/x")
    assert unknown.exit_code == 2 and "climbs out" in unknown.stderr or "holds no log \"sub\u241bagents/x\"" in unknown.stderr
