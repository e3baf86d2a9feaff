"""Small crafted dsh logs for the stats tests: raw JSONL with explicit seq and time.

Each scenario is written out twice by hand — as dsh ≤ 0.1.2 writes it (v0: one ``assistant/chunk`` per
chunk, packed rows) and as the v1→v2 fold makes it (v2: streams embedded in settlements). ``later()``
turns a v2 text into v3 (no ``request/header.system``) and v4 (tool-role ``tool/result``): the changes
those generations make to the events the stats read. Expected figures are in the tests, with their
arithmetic.
"""

from __future__ import annotations

import json
import textwrap


def jsonl(text: str) -> str:
    """Dedent, drop blank lines and comment lines (``#``), and end with LF."""
    lines = [line for line in textwrap.dedent(text).splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for line in lines:
        json.loads(line)  # every line must be JSON
    return "\n".join(lines) + "\n"


def later(v2_text: str, version: int) -> str:
    """The v2 text as v3 or v4 writes the same events (header version; v3+ headers without system;
    v4 tool results in the tool-role shape)."""
    out = []
    for line in v2_text.splitlines():
        obj = json.loads(line)
        if obj.get("type") == "session":
            obj["version"] = version
        elif obj.get("type") == "request/header" and version >= 3:
            obj["data"]["header"].pop("system", None)
        elif obj.get("type") == "tool/result" and version >= 4:
            message = obj["data"]["message"]
            block = message["content"][0]
            obj["data"]["message"] = {
                "role": "tool",
                "source": message["source"],
                "toolCallId": block["toolCallId"],
                "content": block["content"],
                "id": message["id"],
            }
        out.append(json.dumps(obj, separators=(",", ":")))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------
# A. Same-step retry: the first token arrives in the failed attempt; llm/retry-started makes the retried
#    attempt's usage add (0.1.5 meter).

RETRY_V0 = jsonl(
    """
    {"type":"session","version":0,"id":"retry","createdAt":1790000000000,"cwd":"/w","delegationDepth":0}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"user/message","seq":2,"time":1001,"data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}
    {"type":"request/header","seq":3,"time":1002,"data":{"header":{"config":{"provider":"p","model":"m"},"system":"sys","tools":[]},"reason":"initial"}}
    {"type":"request/context","seq":4,"time":1003,"data":{"provider":"p","model":"m","contextWindow":1000}}
    {"type":"assistant/chunk","seq":5,"time":1100,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}
    {"type":"assistant/chunk","seq":6,"time":1100,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}
    {"type":"assistant/chunk","seq":7,"time":1150,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"b"}}}
    {"type":"assistant/chunk","seq":8,"time":1160,"data":{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":100,"outputTokens":2}}}}
    {"type":"assistant/chunk","seq":9,"time":1160,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"error","failure":{"message":"overloaded","code":"SERVER","status":503}}}}}
    {"type":"llm/retry","seq":10,"time":1161,"data":{"retryId":"r1","turn":1,"step":1,"provider":"p","mode":"normal","policyKey":"k","retry":1,"maxRetries":3,"delayMs":500,"failure":{"message":"overloaded","code":"SERVER","status":503}}}
    {"type":"llm/retry-started","seq":11,"time":1661,"data":{"retryId":"r1","turn":1,"step":1,"retry":1}}
    {"type":"assistant/chunk","seq":12,"time":1800,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}
    {"type":"text-chunks","seq0":13,"time0":1800,"data":{"turn":1,"step":1,"index":0,"dt":[50,50],"texts":["c","d","e"]}}
    {"type":"assistant/chunk","seq":16,"time":1900,"data":{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"cde"}}}}
    {"type":"assistant/chunk","seq":17,"time":1901,"data":{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":50,"outputTokens":3,"cacheReadTokens":150}}}}
    {"type":"assistant/chunk","seq":18,"time":1901,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}
    {"type":"assistant/message","seq":19,"time":1902,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"cde"}],"source":{"kind":"model","provider":"p","model":"m"}},"usage":{"inputTokens":50,"outputTokens":3,"cacheReadTokens":150}},"sourceEventSeqs":[[12,18]],"surfaceOp":"append"}
    {"type":"step/end","seq":20,"time":1903,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":21,"time":1904,"data":{"turn":1,"reason":{"kind":"completed"}}}
    """
)

RETRY_V2 = jsonl(
    """
    {"type":"session","version":2,"id":"retry","createdAt":1790000000000,"cwd":"/w","delegationDepth":0,"isSeeded":false}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"user/message","seq":2,"time":1001,"data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}
    {"type":"request/header","seq":3,"time":1002,"data":{"header":{"config":{"provider":"p","model":"m"},"system":"sys","tools":[]},"reason":"initial"}}
    {"type":"request/context","seq":4,"time":1003,"data":{"provider":"p","model":"m","contextWindow":1000}}
    {"type":"assistant/attempt","seq":5,"time":1160,"data":{"turn":1,"step":1,"stream":[{"type":"chunk","time":1100,"chunk":{"type":"block-start","index":0,"blockType":"text"}},{"type":"text-chunks","time0":1100,"index":0,"dt":[50],"texts":["a","b"]},{"type":"chunk","time":1160,"chunk":{"type":"usage","usage":{"inputTokens":100,"outputTokens":2}}},{"type":"chunk","time":1160,"chunk":{"type":"finish","reason":{"kind":"error","failure":{"message":"overloaded","code":"SERVER","status":503}}}}]}}
    {"type":"llm/retry","seq":6,"time":1161,"data":{"retryId":"r1","turn":1,"step":1,"provider":"p","mode":"normal","policyKey":"k","retry":1,"maxRetries":3,"delayMs":500,"failure":{"message":"overloaded","code":"SERVER","status":503}}}
    {"type":"llm/retry-started","seq":7,"time":1661,"data":{"retryId":"r1","turn":1,"step":1,"retry":1}}
    {"type":"assistant/message","seq":8,"time":1902,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"cde"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"chunk","time":1800,"chunk":{"type":"block-start","index":0,"blockType":"text"}},{"type":"text-chunks","time0":1800,"index":0,"dt":[50,50],"texts":["c","d","e"]},{"type":"chunk","time":1900,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"cde"}}},{"type":"chunk","time":1901,"chunk":{"type":"usage","usage":{"inputTokens":50,"outputTokens":3,"cacheReadTokens":150}}},{"type":"chunk","time":1901,"chunk":{"type":"finish","reason":{"kind":"stop"}}}],"usage":{"inputTokens":50,"outputTokens":3,"cacheReadTokens":150}},"surfaceOp":"append"}
    {"type":"step/end","seq":9,"time":1903,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":10,"time":1904,"data":{"turn":1,"reason":{"kind":"completed"}}}
    """
)

# ---------------------------------------------------------------------------------------------------
# B. Turn 1: a max-tokens step (the truncated call is dropped from the message).
#    Turn 2: step 1 with two tool calls, only one of which gets a result (the other is unmatched and
#    dropped at turn/end); step 2 cancelled mid-stream: an interrupted message without usage.
#    Turn 3: a step cancelled before anything visible: no message at all.

MIXED_V0 = jsonl(
    """
    {"type":"session","version":0,"id":"mixed","createdAt":1800000000000,"cwd":"/w","delegationDepth":0}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"user/message","seq":2,"time":1001,"data":{"id":"u1","role":"user","content":[{"type":"text","text":"write it"}],"source":{"kind":"user"}},"surfaceOp":"append"}
    {"type":"assistant/chunk","seq":3,"time":1100,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}
    {"type":"assistant/chunk","seq":4,"time":1100,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"x"}}}
    {"type":"assistant/chunk","seq":5,"time":1100,"data":{"turn":1,"step":1,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"x"}}}}
    {"type":"assistant/chunk","seq":6,"time":1150,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":1,"id":"w1","name":"write","argumentsDelta":"{\\"a\\""}}}
    {"type":"assistant/chunk","seq":7,"time":1200,"data":{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":10,"outputTokens":20}}}}
    {"type":"assistant/chunk","seq":8,"time":1200,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"max-tokens"}}}}
    {"type":"assistant/message","seq":9,"time":1201,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"x"}],"source":{"kind":"model","provider":"p","model":"m"}},"usage":{"inputTokens":10,"outputTokens":20}},"sourceEventSeqs":[[3,8]],"surfaceOp":"append"}
    {"type":"step/end","seq":10,"time":1202,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":11,"time":1203,"data":{"turn":1,"reason":{"kind":"max-tokens"}}}
    {"type":"turn/start","seq":12,"time":2000,"data":{"turn":2}}
    {"type":"step/start","seq":13,"time":2000,"data":{"turn":2,"step":1}}
    {"type":"user/message","seq":14,"time":2001,"data":{"id":"u2","role":"user","content":[{"type":"text","text":"read both"}],"source":{"kind":"user"}},"surfaceOp":"append"}
    {"type":"assistant/chunk","seq":15,"time":2050,"data":{"turn":2,"step":1,"chunk":{"type":"text-delta","index":0,"text":"y"}}}
    {"type":"assistant/chunk","seq":16,"time":2060,"data":{"turn":2,"step":1,"chunk":{"type":"tool-call-delta","index":1,"id":"c1","name":"read","argumentsDelta":"{}"}}}
    {"type":"assistant/chunk","seq":17,"time":2070,"data":{"turn":2,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"c2","name":"read","argumentsDelta":"{}"}}}
    {"type":"assistant/chunk","seq":18,"time":2100,"data":{"turn":2,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":30,"outputTokens":5}}}}
    {"type":"assistant/chunk","seq":19,"time":2100,"data":{"turn":2,"step":1,"chunk":{"type":"finish","reason":{"kind":"tool-calls"}}}}
    {"type":"assistant/message","seq":20,"time":2101,"data":{"turn":2,"step":1,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"y"},{"type":"tool-call","id":"c1","name":"read","arguments":"{}"},{"type":"tool-call","id":"c2","name":"read","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"usage":{"inputTokens":30,"outputTokens":5}},"sourceEventSeqs":[[15,19]],"surfaceOp":"append"}
    {"type":"tool/call","seq":21,"time":2102,"data":{"turn":2,"step":1,"callId":"c1","name":"read","arguments":"{}"}}
    {"type":"tool/call","seq":22,"time":2103,"data":{"turn":2,"step":1,"callId":"c2","name":"read","arguments":"{}"}}
    {"type":"tool/result","seq":23,"time":2153,"data":{"turn":2,"step":1,"message":{"id":"t1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"ok"}]}],"source":{"kind":"tool","callId":"c1"}}},"sourceEventSeqs":[21],"surfaceOp":"append"}
    {"type":"step/end","seq":24,"time":2154,"data":{"turn":2,"step":1}}
    {"type":"step/start","seq":25,"time":2200,"data":{"turn":2,"step":2}}
    {"type":"assistant/chunk","seq":26,"time":2300,"data":{"turn":2,"step":2,"chunk":{"type":"reasoning-delta","index":0,"text":"r"}}}
    {"type":"assistant/chunk","seq":27,"time":2350,"data":{"turn":2,"step":2,"chunk":{"type":"text-delta","index":1,"text":"z"}}}
    {"type":"assistant/message","seq":28,"time":2400,"data":{"turn":2,"step":2,"message":{"id":"a3","role":"assistant","content":[{"type":"reasoning","text":"r"},{"type":"text","text":"z"}],"source":{"kind":"model","provider":"p","model":"m"}},"interrupted":true},"sourceEventSeqs":[26,27],"surfaceOp":"append"}
    {"type":"step/end","seq":29,"time":2401,"data":{"turn":2,"step":2}}
    {"type":"turn/end","seq":30,"time":2402,"data":{"turn":2,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}
    {"type":"turn/start","seq":31,"time":3000,"data":{"turn":3}}
    {"type":"step/start","seq":32,"time":3000,"data":{"turn":3,"step":1}}
    {"type":"assistant/chunk","seq":33,"time":3050,"data":{"turn":3,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}
    {"type":"step/end","seq":34,"time":3051,"data":{"turn":3,"step":1}}
    {"type":"turn/end","seq":35,"time":3052,"data":{"turn":3,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}
    """
)

MIXED_V2 = jsonl(
    """
    {"type":"session","version":2,"id":"mixed","createdAt":1800000000000,"cwd":"/w","delegationDepth":0,"isSeeded":false}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"user/message","seq":2,"time":1001,"data":{"id":"u1","role":"user","content":[{"type":"text","text":"write it"}],"source":{"kind":"user"}},"surfaceOp":"append"}
    {"type":"assistant/message","seq":3,"time":1201,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"x"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"chunk","time":1100,"chunk":{"type":"block-start","index":0,"blockType":"text"}},{"type":"text-chunks","time0":1100,"index":0,"dt":[],"texts":["x"]},{"type":"chunk","time":1100,"chunk":{"type":"block-end","index":0,"block":{"type":"text","text":"x"}}},{"type":"tool-call-chunks","time0":1150,"index":1,"dt":[],"id":"w1","name":"write","args":["{\\"a\\""]},{"type":"chunk","time":1200,"chunk":{"type":"usage","usage":{"inputTokens":10,"outputTokens":20}}},{"type":"chunk","time":1200,"chunk":{"type":"finish","reason":{"kind":"max-tokens"}}}],"usage":{"inputTokens":10,"outputTokens":20}},"surfaceOp":"append"}
    {"type":"step/end","seq":4,"time":1202,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":5,"time":1203,"data":{"turn":1,"reason":{"kind":"max-tokens"}}}
    {"type":"turn/start","seq":6,"time":2000,"data":{"turn":2}}
    {"type":"step/start","seq":7,"time":2000,"data":{"turn":2,"step":1}}
    {"type":"user/message","seq":8,"time":2001,"data":{"id":"u2","role":"user","content":[{"type":"text","text":"read both"}],"source":{"kind":"user"}},"surfaceOp":"append"}
    {"type":"assistant/message","seq":9,"time":2101,"data":{"turn":2,"step":1,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"y"},{"type":"tool-call","id":"c1","name":"read","arguments":"{}"},{"type":"tool-call","id":"c2","name":"read","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"text-chunks","time0":2050,"index":0,"dt":[],"texts":["y"]},{"type":"tool-call-chunks","time0":2060,"index":1,"dt":[],"id":"c1","name":"read","args":["{}"]},{"type":"tool-call-chunks","time0":2070,"index":2,"dt":[],"id":"c2","name":"read","args":["{}"]},{"type":"chunk","time":2100,"chunk":{"type":"usage","usage":{"inputTokens":30,"outputTokens":5}}},{"type":"chunk","time":2100,"chunk":{"type":"finish","reason":{"kind":"tool-calls"}}}],"usage":{"inputTokens":30,"outputTokens":5}},"surfaceOp":"append"}
    {"type":"tool/call","seq":10,"time":2102,"data":{"turn":2,"step":1,"callId":"c1","name":"read","arguments":"{}"}}
    {"type":"tool/call","seq":11,"time":2103,"data":{"turn":2,"step":1,"callId":"c2","name":"read","arguments":"{}"}}
    {"type":"tool/result","seq":12,"time":2153,"data":{"turn":2,"step":1,"message":{"id":"t1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"ok"}]}],"source":{"kind":"tool","callId":"c1"}}},"sourceEventSeqs":[10],"surfaceOp":"append"}
    {"type":"step/end","seq":13,"time":2154,"data":{"turn":2,"step":1}}
    {"type":"step/start","seq":14,"time":2200,"data":{"turn":2,"step":2}}
    {"type":"assistant/message","seq":15,"time":2400,"data":{"turn":2,"step":2,"message":{"id":"a3","role":"assistant","content":[{"type":"reasoning","text":"r"},{"type":"text","text":"z"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"reasoning-chunks","time0":2300,"index":0,"dt":[],"texts":["r"]},{"type":"text-chunks","time0":2350,"index":1,"dt":[],"texts":["z"]}],"interrupted":true},"surfaceOp":"append"}
    {"type":"step/end","seq":16,"time":2401,"data":{"turn":2,"step":2}}
    {"type":"turn/end","seq":17,"time":2402,"data":{"turn":2,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}
    {"type":"turn/start","seq":18,"time":3000,"data":{"turn":3}}
    {"type":"step/start","seq":19,"time":3000,"data":{"turn":3,"step":1}}
    {"type":"assistant/attempt","seq":20,"time":3050,"data":{"turn":3,"step":1,"stream":[{"type":"chunk","time":3050,"chunk":{"type":"block-start","index":0,"blockType":"text"}}]}}
    {"type":"step/end","seq":21,"time":3051,"data":{"turn":3,"step":1}}
    {"type":"turn/end","seq":22,"time":3052,"data":{"turn":3,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}
    """
)

# ---------------------------------------------------------------------------------------------------
# C. No usage anywhere: dsh's meter stays at 0; cache hit, throughput and occupancy have no value.

NO_USAGE_V0 = jsonl(
    """
    {"type":"session","version":0,"id":"nousage","createdAt":1810000000000,"cwd":"/w","delegationDepth":0}
    {"type":"turn/start","seq":0,"time":5000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":5000,"data":{"turn":1,"step":1}}
    {"type":"request/context","seq":2,"time":5001,"data":{"provider":"p","model":"m","contextWindow":64000}}
    {"type":"assistant/chunk","seq":3,"time":5040,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"ok"}}}
    {"type":"assistant/chunk","seq":4,"time":5040,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}
    {"type":"assistant/message","seq":5,"time":5041,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"p","model":"m"}}},"sourceEventSeqs":[3,4],"surfaceOp":"append"}
    {"type":"step/end","seq":6,"time":5042,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":7,"time":5043,"data":{"turn":1,"reason":{"kind":"completed"}}}
    """
)

NO_USAGE_V2 = jsonl(
    """
    {"type":"session","version":2,"id":"nousage","createdAt":1810000000000,"cwd":"/w","delegationDepth":0,"isSeeded":false}
    {"type":"turn/start","seq":0,"time":5000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":5000,"data":{"turn":1,"step":1}}
    {"type":"request/context","seq":2,"time":5001,"data":{"provider":"p","model":"m","contextWindow":64000}}
    {"type":"assistant/message","seq":3,"time":5041,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"text-chunks","time0":5040,"index":0,"dt":[],"texts":["ok"]},{"type":"chunk","time":5040,"chunk":{"type":"finish","reason":{"kind":"stop"}}}]},"surfaceOp":"append"}
    {"type":"step/end","seq":4,"time":5042,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":5,"time":5043,"data":{"turn":1,"reason":{"kind":"completed"}}}
    """
)

# ---------------------------------------------------------------------------------------------------
# D. A seeded (forked) child: turn 1 is inherited from the parent, turn 2 is its own. dsh counts the
#    whole log. v0 marks the cut with seedLength; v2+ with session/end-seed {inherited: true}.

CHILD_V0 = jsonl(
    """
    {"type":"session","version":0,"id":"child","createdAt":1820000000000,"cwd":"/w","delegationDepth":1,"parentSession":"parent","seedLength":7}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"assistant/chunk","seq":2,"time":1200,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"parent"}}}
    {"type":"assistant/chunk","seq":3,"time":1300,"data":{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":100,"outputTokens":10}}}}
    {"type":"assistant/message","seq":4,"time":1301,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"parent"}],"source":{"kind":"model","provider":"p","model":"m"}},"usage":{"inputTokens":100,"outputTokens":10}},"sourceEventSeqs":[2,3],"surfaceOp":"append"}
    {"type":"step/end","seq":5,"time":1302,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":6,"time":1303,"data":{"turn":1,"reason":{"kind":"completed"}}}
    {"type":"session/end-seed","seq":7,"time":9000,"data":{}}
    {"type":"turn/start","seq":8,"time":9100,"data":{"turn":2}}
    {"type":"step/start","seq":9,"time":9100,"data":{"turn":2,"step":1}}
    {"type":"assistant/chunk","seq":10,"time":9400,"data":{"turn":2,"step":1,"chunk":{"type":"text-delta","index":0,"text":"child"}}}
    {"type":"assistant/chunk","seq":11,"time":9500,"data":{"turn":2,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":20,"outputTokens":30,"cacheReadTokens":80}}}}
    {"type":"assistant/message","seq":12,"time":9501,"data":{"turn":2,"step":1,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"child"}],"source":{"kind":"model","provider":"p","model":"m"}},"usage":{"inputTokens":20,"outputTokens":30,"cacheReadTokens":80}},"sourceEventSeqs":[10,11],"surfaceOp":"append"}
    {"type":"step/end","seq":13,"time":9502,"data":{"turn":2,"step":1}}
    {"type":"turn/end","seq":14,"time":9503,"data":{"turn":2,"reason":{"kind":"completed"}}}
    """
)

CHILD_V2 = jsonl(
    """
    {"type":"session","version":2,"id":"child","createdAt":1820000000000,"cwd":"/w","delegationDepth":1,"parentSession":"parent","isSeeded":true}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"assistant/message","seq":2,"time":1301,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"parent"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"text-chunks","time0":1200,"index":0,"dt":[],"texts":["parent"]},{"type":"chunk","time":1300,"chunk":{"type":"usage","usage":{"inputTokens":100,"outputTokens":10}}}],"usage":{"inputTokens":100,"outputTokens":10}},"surfaceOp":"append"}
    {"type":"step/end","seq":3,"time":1302,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":4,"time":1303,"data":{"turn":1,"reason":{"kind":"completed"}}}
    {"type":"session/end-seed","seq":5,"time":9000,"data":{"inherited":true}}
    {"type":"turn/start","seq":6,"time":9100,"data":{"turn":2}}
    {"type":"step/start","seq":7,"time":9100,"data":{"turn":2,"step":1}}
    {"type":"assistant/message","seq":8,"time":9501,"data":{"turn":2,"step":1,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"child"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"text-chunks","time0":9400,"index":0,"dt":[],"texts":["child"]},{"type":"chunk","time":9500,"chunk":{"type":"usage","usage":{"inputTokens":20,"outputTokens":30,"cacheReadTokens":80}}}],"usage":{"inputTokens":20,"outputTokens":30,"cacheReadTokens":80}},"surfaceOp":"append"}
    {"type":"step/end","seq":9,"time":9502,"data":{"turn":2,"step":1}}
    {"type":"turn/end","seq":10,"time":9503,"data":{"turn":2,"reason":{"kind":"completed"}}}
    """
)


# The parent the child above was forked from: its turn 1 is the child's inherited turn 1 (same events),
# then a turn of its own.

PARENT_V2 = jsonl(
    """
    {"type":"session","version":2,"id":"parent","createdAt":1819999999000,"cwd":"/w","delegationDepth":0,"isSeeded":false}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"assistant/message","seq":2,"time":1301,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"parent"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"text-chunks","time0":1200,"index":0,"dt":[],"texts":["parent"]},{"type":"chunk","time":1300,"chunk":{"type":"usage","usage":{"inputTokens":100,"outputTokens":10}}}],"usage":{"inputTokens":100,"outputTokens":10}},"surfaceOp":"append"}
    {"type":"step/end","seq":3,"time":1302,"data":{"turn":1,"step":1}}
    {"type":"turn/end","seq":4,"time":1303,"data":{"turn":1,"reason":{"kind":"completed"}}}
    {"type":"turn/start","seq":5,"time":5000,"data":{"turn":2}}
    {"type":"step/start","seq":6,"time":5000,"data":{"turn":2,"step":1}}
    {"type":"assistant/message","seq":7,"time":5201,"data":{"turn":2,"step":1,"message":{"id":"a3","role":"assistant","content":[{"type":"text","text":"more"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"text-chunks","time0":5100,"index":0,"dt":[],"texts":["more"]},{"type":"chunk","time":5200,"chunk":{"type":"usage","usage":{"inputTokens":200,"outputTokens":40,"cacheReadTokens":100}}}],"usage":{"inputTokens":200,"outputTokens":40,"cacheReadTokens":100}},"surfaceOp":"append"}
    {"type":"step/end","seq":8,"time":5202,"data":{"turn":2,"step":1}}
    {"type":"turn/end","seq":9,"time":5203,"data":{"turn":2,"reason":{"kind":"completed"}}}
    """
)


# ---------------------------------------------------------------------------------------------------
# E. Nothing optional happens: no tool call, no retry, no request/context. Turn 1 has two zero-output
#    steps (the provider reports outputTokens 0 although text streamed); step 2's message lands in the
#    same millisecond as its first token (a decode span of 0). Turn 2 is closed without any step.

BARE_V0 = jsonl(
    """
    {"type":"session","version":0,"id":"bare","createdAt":1830000000000,"cwd":"/w","delegationDepth":0}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"user/message","seq":2,"time":1001,"data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}
    {"type":"assistant/chunk","seq":3,"time":1100,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"ok"}}}
    {"type":"assistant/chunk","seq":4,"time":1149,"data":{"turn":1,"step":1,"chunk":{"type":"usage","usage":{"inputTokens":50,"outputTokens":0}}}}
    {"type":"assistant/chunk","seq":5,"time":1149,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}
    {"type":"assistant/message","seq":6,"time":1150,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"p","model":"m"}},"usage":{"inputTokens":50,"outputTokens":0}},"sourceEventSeqs":[3,4,5],"surfaceOp":"append"}
    {"type":"step/end","seq":7,"time":1151,"data":{"turn":1,"step":1}}
    {"type":"step/start","seq":8,"time":1200,"data":{"turn":1,"step":2}}
    {"type":"assistant/chunk","seq":9,"time":1250,"data":{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"."}}}
    {"type":"assistant/chunk","seq":10,"time":1250,"data":{"turn":1,"step":2,"chunk":{"type":"usage","usage":{"inputTokens":60,"outputTokens":0,"cacheReadTokens":40}}}}
    {"type":"assistant/chunk","seq":11,"time":1250,"data":{"turn":1,"step":2,"chunk":{"type":"finish","reason":{"kind":"stop"}}}}
    {"type":"assistant/message","seq":12,"time":1250,"data":{"turn":1,"step":2,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"."}],"source":{"kind":"model","provider":"p","model":"m"}},"usage":{"inputTokens":60,"outputTokens":0,"cacheReadTokens":40}},"sourceEventSeqs":[9,10,11],"surfaceOp":"append"}
    {"type":"step/end","seq":13,"time":1251,"data":{"turn":1,"step":2}}
    {"type":"turn/end","seq":14,"time":1252,"data":{"turn":1,"reason":{"kind":"completed"}}}
    {"type":"turn/start","seq":15,"time":2000,"data":{"turn":2}}
    {"type":"turn/end","seq":16,"time":2001,"data":{"turn":2,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}
    """
)

BARE_V2 = jsonl(
    """
    {"type":"session","version":2,"id":"bare","createdAt":1830000000000,"cwd":"/w","delegationDepth":0,"isSeeded":false}
    {"type":"turn/start","seq":0,"time":1000,"data":{"turn":1}}
    {"type":"step/start","seq":1,"time":1000,"data":{"turn":1,"step":1}}
    {"type":"user/message","seq":2,"time":1001,"data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}
    {"type":"assistant/message","seq":3,"time":1150,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"text-chunks","time0":1100,"index":0,"dt":[],"texts":["ok"]},{"type":"chunk","time":1149,"chunk":{"type":"usage","usage":{"inputTokens":50,"outputTokens":0}}},{"type":"chunk","time":1149,"chunk":{"type":"finish","reason":{"kind":"stop"}}}],"usage":{"inputTokens":50,"outputTokens":0}},"surfaceOp":"append"}
    {"type":"step/end","seq":4,"time":1151,"data":{"turn":1,"step":1}}
    {"type":"step/start","seq":5,"time":1200,"data":{"turn":1,"step":2}}
    {"type":"assistant/message","seq":6,"time":1250,"data":{"turn":1,"step":2,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"."}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[{"type":"text-chunks","time0":1250,"index":0,"dt":[],"texts":["."]},{"type":"chunk","time":1250,"chunk":{"type":"usage","usage":{"inputTokens":60,"outputTokens":0,"cacheReadTokens":40}}},{"type":"chunk","time":1250,"chunk":{"type":"finish","reason":{"kind":"stop"}}}],"usage":{"inputTokens":60,"outputTokens":0,"cacheReadTokens":40}},"surfaceOp":"append"}
    {"type":"step/end","seq":7,"time":1251,"data":{"turn":1,"step":2}}
    {"type":"turn/end","seq":8,"time":1252,"data":{"turn":1,"reason":{"kind":"completed"}}}
    {"type":"turn/start","seq":9,"time":2000,"data":{"turn":2}}
    {"type":"turn/end","seq":10,"time":2001,"data":{"turn":2,"reason":{"kind":"aborted","reason":{"kind":"user"}}}}
    """
)


def fixture_form(v2_text: str) -> str:
    """dsh's projected test-fixture form: the same events without envelope seq and time."""
    out = []
    for line in v2_text.splitlines():
        obj = json.loads(line)
        obj.pop("seq", None)
        obj.pop("time", None)
        out.append(json.dumps(obj, separators=(",", ":")))
    return "\n".join(out) + "\n"


SCENARIOS = {
    "retry": (RETRY_V0, RETRY_V2),
    "mixed": (MIXED_V0, MIXED_V2),
    "nousage": (NO_USAGE_V0, NO_USAGE_V2),
    "child": (CHILD_V0, CHILD_V2),
    "bare": (BARE_V0, BARE_V2),
    "parent": (None, PARENT_V2),
}


def generations(name: str) -> dict[str, str]:
    """``{"v0": text, "v2": text, "v3": text, "v4": text}`` for a scenario."""
    v0, v2 = SCENARIOS[name]
    out = {"v2": v2, "v3": later(v2, 3), "v4": later(v2, 4)}
    return {"v0": v0, **out} if v0 is not None else out


FILE_NAMES = {"v0": "session.jsonl", "v2": "session.v2.jsonl", "v3": "session.v3.jsonl", "v4": "session.v4.jsonl"}


# ---------------------------------------------------------------------------------------------------
# Rollups (#16): whole v4 sessions built from a few numbers, so the tests can pick start times, working
# directories, models and tools, and compute what each rollup row must hold by hand.


def rollup_step(*, model="p/m", start, first, end, tokens=(0, 0, 0, 0), reasoning=None, tools=()) -> dict:
    """One step: ``step/start`` at ``start``, first token at ``first``, message at ``end`` with usage
    ``tokens`` = (uncached input, output, cache read, cache write); ``tools`` = (name, ms, failed) calls
    made after the message, one after the other."""
    return {"model": model, "start": start, "first": first, "end": end, "tokens": tokens, "reasoning": reasoning, "tools": tools}


def rollup_session(session_id, *, created, cwd="/w", turns=(), parent=None, inherited=None, prompt="do it") -> str:
    """A v4 log: ``turns`` is a list of turns, each a list of :func:`rollup_step` dicts. A fork child
    (``parent`` set) repeats ``inherited`` (the parent's events as JSONL lines) before its
    ``session/end-seed {inherited: true}``."""
    header = {"type": "session", "version": 4, "id": session_id, "createdAt": created, "cwd": cwd, "isSeeded": parent is not None, "delegationDepth": 0}
    if parent is not None:
        header["parentSession"] = parent
    events = [json.loads(line) for line in (inherited or [])]
    seq = len(events)

    def add(kind, time, data, **extra):
        nonlocal seq
        events.append({"type": kind, "seq": seq, "time": time, "data": data, **extra})
        seq += 1

    if parent is not None:
        last = events[-1]["time"] if events else created
        add("session/end-seed", last, {"inherited": True})
    first_turn = 1 + max((e["data"].get("turn", 0) for e in events if e["type"] == "turn/start"), default=0)
    for number, steps in enumerate(turns, start=first_turn):
        add("turn/start", steps[0]["start"], {"turn": number})
        for index, step in enumerate(steps, start=1):
            _rollup_step_events(add, number, index, step, prompt if index == 1 else None)
        add("turn/end", steps[-1]["end"] + sum(ms for _, ms, _ in steps[-1]["tools"]) + 1, {"turn": number, "reason": {"kind": "completed"}})
    lines = [json.dumps(header, separators=(",", ":"))] + [json.dumps(e, separators=(",", ":")) for e in events]
    return "\n".join(lines) + "\n"


def _rollup_step_events(add, turn, step, spec, prompt) -> None:
    provider, model = spec["model"].split("/", 1)
    start, first, end = spec["start"], spec["first"], spec["end"]
    add("step/start", start, {"turn": turn, "step": step})
    if prompt is not None:
        add("user/message", start, {"content": [{"type": "text", "text": prompt}], "source": {"kind": "user"}, "id": f"u{turn}"}, surfaceOp="append")
    add("request/header", start, {"header": {"config": {"provider": provider, "model": model}}, "reason": "initial"})
    uncached, output, read, write = spec["tokens"]
    usage = {"inputTokens": uncached, "outputTokens": output}
    if read:
        usage["cacheReadTokens"] = read
    if write:
        usage["cacheWriteTokens"] = write
    if spec["reasoning"] is not None:
        usage["reasoningTokens"] = spec["reasoning"]
    stream = [
        {"type": "chunk", "time": first, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}},
        {"type": "text-chunks", "time0": first, "index": 0, "dt": [], "texts": ["ok"]},
        {"type": "chunk", "time": end, "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "ok"}}},
        {"type": "chunk", "time": end, "chunk": {"type": "usage", "usage": usage}},
        {"type": "chunk", "time": end, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
    ]
    message = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "source": {"kind": "model", "provider": provider, "model": model}, "id": f"a{turn}.{step}"}
    add("assistant/message", end, {"turn": turn, "step": step, "message": message, "usage": usage, "stream": stream}, surfaceOp="append")
    clock = end
    for index, (name, ms, failed) in enumerate(spec["tools"]):
        call_id = f"c{turn}.{step}.{index}"
        add("tool/call", clock, {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": "{}"})
        result = {"role": "tool", "source": {"kind": "tool", "callId": call_id}, "toolCallId": call_id, "content": [{"type": "text", "text": "r"}], "isError": failed, "id": f"r{call_id}"}
        add("tool/result", clock + ms, {"turn": turn, "step": step, "message": result}, surfaceOp="append")
        clock += ms
    add("step/end", clock, {"turn": turn, "step": step})


def log_lines(text: str) -> list[str]:
    """The event lines of a log (its header dropped): what a fork child inherits."""
    return text.splitlines()[1:]
