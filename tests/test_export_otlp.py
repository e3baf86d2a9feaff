"""``dshctl export --format otlp`` (issue #24): every line parses with opentelemetry-proto's own JSON
parser, the span tree is well formed, attribute values are the stats rows', content only on request."""

from __future__ import annotations

import base64
import json

import pytest

json_format = pytest.importorskip("google.protobuf.json_format")
trace_pb2 = pytest.importorskip("opentelemetry.proto.trace.v1.trace_pb2")

from stats_logs import rollup_session, rollup_step  # noqa: E402
from conftest import CORPUS, SAMPLES, corpus_file, invoke  # noqa: E402
from test_stats_rollups import T1  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "no-dsh-home"))


def traces(tmp_path, *paths, extra=()) -> list[dict]:
    out = tmp_path / "traces.jsonl"
    result = invoke("export", "--format", "otlp", "--out", str(out), "--force", *map(str, paths), *extra)
    assert result.exit_code in (0, 1), result.output
    lines = out.read_bytes().splitlines()
    for line in lines:
        parsed = json_format.Parse(line, trace_pb2.TracesData())  # the package's own parser: names, enums, types
        for resource in parsed.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    assert span.name and span.span_id and span.trace_id
    return [json.loads(line) for line in lines]


def spans_of(lines: list[dict]) -> list[dict]:
    return [span for line in lines for resource in line["resourceSpans"] for scope in resource["scopeSpans"] for span in scope["spans"]]


def attrs(span: dict) -> dict:
    out = {}
    for kv in span["attributes"]:
        value = kv["value"]
        (kind, raw), = value.items()
        out[kv["key"]] = int(raw) if kind == "intValue" else [next(iter(v.values())) for v in raw["values"]] if kind == "arrayValue" else raw
    return out


def check_tree(spans: list[dict]) -> None:
    ids = [span["spanId"] for span in spans]
    assert len(ids) == len(set(ids)), "span ids are unique"
    by_id = {span["spanId"]: span for span in spans}
    for span in spans:
        assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16 and int(span["traceId"], 16) and int(span["spanId"], 16)
        assert int(span["startTimeUnixNano"]) <= int(span["endTimeUnixNano"])
        parent_id = span["parentSpanId"]
        if not parent_id:
            assert span["name"].startswith("invoke_agent")
            continue
        parent = by_id[parent_id]  # every parent exists
        assert parent["traceId"] == span["traceId"]
        if span["name"].startswith("invoke_agent"):
            continue  # a subagent session may outlive the call that started it (run in the background)
        assert int(parent["startTimeUnixNano"]) <= int(span["startTimeUnixNano"]), span["name"]
        assert int(span["endTimeUnixNano"]) <= int(parent["endTimeUnixNano"]), span["name"]


def _all_logs():
    paths = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and ".jsonl" in p.name)
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.jsonl"))
    return [p for p in paths if invoke("stats", "--json", str(p)).exit_code == 0]


def test_every_sample_and_corpus_line_parses_and_the_tree_is_well_formed(tmp_path):
    lines = []
    for log in _all_logs():  # one at a time: the samples hold one session in several generations (the same ids)
        mine = traces(tmp_path, log)
        check_tree(spans_of(mine))
        lines += mine
    spans = spans_of(lines)
    assert len(spans) > 100
    for line in lines:
        resource = line["resourceSpans"][0]
        assert resource["schemaUrl"] == "https://opentelemetry.io/schemas/1.41.0"
        for span in resource["scopeSpans"][0]["spans"]:
            assert isinstance(span["startTimeUnixNano"], str) and span["startTimeUnixNano"].isdigit()
            assert isinstance(span["kind"], int)
    kinds = {span["name"].split(" ")[0]: span["kind"] for span in spans}
    assert kinds == {"invoke_agent": 1, "turn": 1, "chat": 3, "execute_tool": 1}


def test_ids_are_deterministic(tmp_path):
    a = traces(tmp_path, SAMPLES / "tour.session.v4.jsonl")
    b = traces(tmp_path, SAMPLES / "tour.session.v4.jsonl")
    assert a == b


def test_chat_and_tool_attributes_are_the_stats_rows(tmp_path):
    log = SAMPLES / "tour.session.v4.jsonl"
    spans = spans_of(traces(tmp_path, log))
    steps = json.loads(invoke("stats", "--json", "--by", "step", str(log)).stdout)["steps"]
    chats = [attrs(s) | {"_status": s.get("status"), "_events": s.get("events", [])} for s in spans if s["name"].startswith("chat")]
    assert len(chats) == sum(row["attempts"] for row in steps)
    for row in steps:
        mine = [c for c in chats if (c["dsh.turn"], c["dsh.step"]) == (row["turn"], row["step"])]
        # usage absent where the settlement reported none (as its steps row is null)
        assert sum(c.get("gen_ai.usage.output_tokens", 0) for c in mine) == (row["outputTokens"] or 0)
        assert sum(c.get("gen_ai.usage.input_tokens", 0) for c in mine) == (row["billedInputTokens"] or 0)
        assert sum(c.get("gen_ai.usage.cache_read.input_tokens", 0) for c in mine) == (row["cacheReadTokens"] or 0)
        assert {c["gen_ai.request.model"] for c in mine} == {row["model"].split("/", 1)[1]}
        for c in mine:
            assert c["gen_ai.operation.name"] == "chat" and c["gen_ai.provider.name"] == "deepseek"
            if c["dsh.outcome"] == "attempt":
                assert c["error.type"] == row["failureCode"] or c["error.type"] and c["_status"]["code"] == 2
    failed = [c for c in chats if c["dsh.outcome"] == "attempt"]
    assert failed and failed[0]["_events"][0]["name"] == "dsh.llm.retry"
    session = json.loads(invoke("stats", "--json", str(log)).stdout)["sessions"][0]
    tools = [attrs(s) for s in spans if s["name"].startswith("execute_tool")]
    assert len(tools) == session["dshctl"]["toolCalls"]
    assert sum(t.get("dsh.tool_ms", 0) for t in tools) == session["toolMs"]
    assert all(t["gen_ai.tool.call.id"] and t["gen_ai.tool.name"] for t in tools)
    root = next(attrs(s) for s in spans if s["name"].startswith("invoke_agent"))
    assert root["gen_ai.conversation.id"] == session["id"] and root["gen_ai.usage.output_tokens"] == session["outputTokens"]


def test_content_only_with_include_content(tmp_path):
    log = SAMPLES / "tour.session.v4.jsonl"
    plain = json.dumps(traces(tmp_path, log))
    for key in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "dsh.prompt"):
        assert key not in plain
    prompt = json.loads(invoke("stats", "--json", "--by", "turn", str(log)).stdout)["turns"][0]["prompt"]
    assert prompt and prompt not in plain
    rich = spans_of(traces(tmp_path, log, extra=("--include-content",)))
    chat = next(attrs(s) for s in rich if s["name"].startswith("chat") and "gen_ai.output.messages" in attrs(s))
    messages = json.loads(chat["gen_ai.output.messages"])
    assert messages[0]["role"] == "assistant" and messages[0]["parts"]
    assert any("gen_ai.tool.call.arguments" in attrs(s) for s in rich if s["name"].startswith("execute_tool"))


@pytest.mark.corpus
def test_subagent_session_sits_under_its_parents_tool_call(tmp_path):
    parent = corpus_file("v2/complete-envelope/webworker-preview-showcase.session.v2.jsonl")
    child = corpus_file("v2/complete-envelope/webworker-preview-architecture-review.child.session.v2.jsonl")
    spans = spans_of(traces(tmp_path, parent, child))
    check_tree(spans)
    roots = [s for s in spans if s["name"].startswith("invoke_agent")]
    assert len(roots) == 2 and roots[0]["traceId"] == roots[1]["traceId"]
    child_root = next(s for s in roots if attrs(s)["gen_ai.conversation.id"] == "preview-architecture-review")
    under = next(s for s in spans if s["spanId"] == child_root["parentSpanId"])
    assert under["name"].startswith("execute_tool")


def test_a_fork_is_its_own_trace_linked_to_its_parent(tmp_path):
    from test_stats_rollups import _logs

    logs = _logs()
    for name in ("s2", "s4"):  # s4 is forked from s2 (seeded, not a subagent)
        (tmp_path / f"{name}.session.v4.jsonl").write_text(logs[name])
    spans = spans_of(traces(tmp_path, tmp_path / "s2.session.v4.jsonl", tmp_path / "s4.session.v4.jsonl"))
    check_tree(spans)
    roots = {attrs(s)["gen_ai.conversation.id"]: s for s in spans if s["name"].startswith("invoke_agent")}
    parent, child = roots["s2"], roots["s4"]
    assert parent["traceId"] != child["traceId"] and not child["parentSpanId"]
    assert child["links"][0]["spanId"] == parent["spanId"] and child["links"][0]["traceId"] == parent["traceId"]
    turns = [attrs(s) for s in spans if s["traceId"] == child["traceId"] and s["name"].startswith("turn")]
    assert [a["dsh.inherited"] for a in turns] == [True, False]


def test_a_subagent_sample_joins_its_parents_trace(tmp_path):
    spans = spans_of(traces(tmp_path, SAMPLES / "tour.session.v4.jsonl", SAMPLES / "fork-child.session.v4.jsonl"))
    check_tree(spans)
    roots = [s for s in spans if s["name"].startswith("invoke_agent")]
    assert len(roots) == 2 and roots[0]["traceId"] == roots[1]["traceId"]
    child = next(s for s in roots if s["parentSpanId"])
    assert next(s for s in spans if s["spanId"] == child["parentSpanId"])["traceId"] == child["traceId"]


def test_hostile_text_round_trips_in_attributes(tmp_path):
    name = 'to"ol\'\x01\n{"x": 1}'
    title = "It's \x1b[2J\"; DROP TABLE spans;--"
    text = rollup_session("h", created=T1, cwd="/w", turns=[[rollup_step(start=T1 + 10, first=T1 + 20, end=T1 + 30, tools=[(name, 5, True)])]])
    lines = text.splitlines()
    events = [json.loads(line) for line in lines[1:]]
    events.insert(1, {"type": "session/title", "seq": 0, "time": T1 + 11, "data": {"title": title, "messageSeqs": [], "source": {"kind": "user"}}})
    for seq, event in enumerate(events):
        event["seq"] = seq
    log = tmp_path / "h.session.v4.jsonl"
    log.write_text("\n".join([lines[0], *map(json.dumps, events)]) + "\n")
    spans = spans_of(traces(tmp_path, log, extra=("--include-content",)))
    tool = next(s for s in spans if s["name"].startswith("execute_tool"))
    assert tool["name"] == f"execute_tool {name}" and attrs(tool)["gen_ai.tool.name"] == name
    assert tool["status"]["code"] == 2
    root = next(s for s in spans if s["name"].startswith("invoke_agent"))
    assert attrs(root)["dsh.session.title"] == title


def test_stdout_and_refusing_to_overwrite(tmp_path):
    out = tmp_path / "t.jsonl"
    out.write_text("keep")
    result = invoke("export", "--format", "otlp", "--out", str(out), str(SAMPLES / "tour.session.v4.jsonl"))
    assert result.exit_code == 2 and "--force" in result.output and out.read_text() == "keep"
    result = invoke("export", "--format", "otlp", "--out", "-", str(SAMPLES / "tour.session.v4.jsonl"))
    assert result.exit_code == 0
    for line in result.stdout.splitlines():
        json_format.Parse(line, trace_pb2.TracesData())
    decoded = base64.b64decode  # proto3 JSON reads hex ids as base64: the OTLP encoding differs there, on purpose
    assert decoded
