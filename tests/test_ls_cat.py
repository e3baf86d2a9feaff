"""`dshctl ls` over a sessions root and `dshctl cat` options, through the CLI."""

from __future__ import annotations

import json

import zstandard

from conftest import invoke


def _log(header: dict, events: list[dict]) -> bytes:
    lines = [header] + [{"seq": i, "time": 1_790_000_000_000 + i, **e} for i, e in enumerate(events)]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _header(version: int, session_id: str, cwd: str | None = "/home/alice/proj") -> dict:
    header = {"type": "session", "version": version, "id": session_id, "createdAt": 1_790_000_000_000}
    if cwd is not None:
        header["cwd"] = cwd
    if version >= 2:
        header["isSeeded"] = False
    header["delegationDepth"] = 0
    return header


def _title(text: str) -> dict:
    return {"type": "session/title", "data": {"title": text, "messageSeqs": [], "source": {"kind": "fallback"}}}


def make_root(tmp_path):
    root = tmp_path / "sessions"
    one = root / "--home-alice-proj--" / "s-1"
    one.mkdir(parents=True)
    (one / "session.jsonl.zstd").write_bytes(
        zstandard.ZstdCompressor().compress(_log(_header(0, "s-1"), [_title("old title")]))
    )
    (one / "session.v4.jsonl.zstd").write_bytes(
        zstandard.ZstdCompressor().compress(_log(_header(4, "s-1"), [_title("first"), _title("latest")]))
    )
    two = root / "_no-cwd" / "a~002Eb"
    two.mkdir(parents=True)
    (two / "session.v2.jsonl").write_bytes(_log(_header(2, "a.b", cwd=None), []))
    return root


def test_ls_lists_highest_generation_with_latest_title(tmp_path):
    root = make_root(tmp_path)
    result = invoke("ls", str(root), "--ndjson")
    assert result.exit_code == 0, result.output
    rows = {row["id"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert set(rows) == {"s-1", "a.b"}
    assert rows["s-1"]["generation"] == 4 and rows["s-1"]["compression"] == "zstd"
    assert rows["s-1"]["title"] == "latest"
    assert rows["s-1"]["cwd"] == "/home/alice/proj"
    assert rows["s-1"]["created"] == "2026-09-21T14:13:20Z"
    assert rows["a.b"]["generation"] == 2 and rows["a.b"]["compression"] == "none" and rows["a.b"]["title"] is None
    assert rows["a.b"]["bytes"] == (root / "_no-cwd" / "a~002Eb" / "session.v2.jsonl").stat().st_size


def test_ls_reports_an_unreadable_session_and_lists_the_rest(tmp_path):
    root = make_root(tmp_path)
    bad = root / "--x--" / "broken"
    bad.mkdir(parents=True)
    (bad / "session.v3.jsonl").write_bytes(b"not json\n")
    result = invoke("ls", str(root), "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert len(doc["sessions"]) == 3
    assert [s for s in doc["sessions"] if s["error"]][0]["path"].endswith("session.v3.jsonl")


def test_ls_of_one_unreadable_log_says_error_as_its_status_does(tmp_path):
    """Status 2 is an error, and the line says so (it read "warning"); among many logs it stays a warning
    with status 1."""
    bad = tmp_path / "session.v3.jsonl"
    bad.write_bytes(b"not json\n")
    result = invoke("ls", str(bad))
    assert result.exit_code == 2
    assert result.stderr == f"dshctl: error: {bad}:1: not JSON: not a dsh session log\n"  # as cat words it


def test_ls_table(tmp_path):
    result = invoke("ls", str(make_root(tmp_path)))
    assert result.exit_code == 0
    assert "latest" in result.stdout and len(result.stdout.splitlines()) == 3  # a pipe: the header and 2 sessions


def _tour(tmp_path):
    events = [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        {
            "type": "assistant/message",
            "data": {
                "turn": 1,
                "step": 1,
                "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "hi!"}], "source": {"kind": "model", "provider": "p", "model": "m"}},
                "stream": [
                    {"type": "text-chunks", "time0": 5, "index": 0, "dt": [1, 2], "texts": ["h", "i", "!"]},
                    {"type": "chunk", "time": 9, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
                ],
            },
            "surfaceOp": "append",
        },
        {"type": "step/end", "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
        {"type": "turn/start", "data": {"turn": 2}},
    ]
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(_log(_header(4, "t"), events))
    return path


def test_cat_filters_and_expand(tmp_path):
    path = _tour(tmp_path)
    result = invoke("cat", str(path))
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert lines[0]["type"] == "session" and len(lines) == 7
    assert lines[3]["data"]["stream"][0]["texts"] == ["h", "i", "!"]

    result = invoke("cat", str(path), "--type", "turn/*")
    assert [json.loads(x)["type"] for x in result.stdout.splitlines()] == ["turn/start", "turn/end", "turn/start"]

    result = invoke("cat", str(path), "--turn", "2")
    assert [json.loads(x)["seq"] for x in result.stdout.splitlines()] == [5]

    result = invoke("cat", str(path), "--expand", "--type", "assistant/message")
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    members = [x for x in lines if x["type"] == "stream/chunk"]
    assert [(m["time"], m["chunk"].get("text")) for m in members] == [(5, "h"), (6, "i"), (8, "!"), (9, None)]
    assert lines[-1]["type"] == "assistant/message" and lines[-1]["streamMembers"] == 4
    assert "stream" not in lines[-1]["data"]


def test_cat_raw_passes_lines_through(tmp_path):
    path = _tour(tmp_path)
    result = invoke("cat", "--raw", str(path))
    assert result.stdout.encode() == path.read_bytes()
