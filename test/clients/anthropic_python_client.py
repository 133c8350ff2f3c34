"""What anthropic-python sees of the gateway's Messages API: each call through the official SDK, its parsed values
printed as one JSON object for test/clients/anthropic-python.test.ts to assert on. argv: origin key limited_key.
The conversation is test/messages/weather-conversation.ts's: the model calls get_weather, then answers. Errors are
recorded, not raised: the test decides which are expected."""
import json
import sys

import anthropic
from anthropic import Anthropic

origin, key, limited_key = sys.argv[1], sys.argv[2], sys.argv[3]
client = Anthropic(base_url=origin, api_key=key, max_retries=0, timeout=20)
out = {"sdk": anthropic.__version__}

TOOL = {"name": "get_weather", "description": "The weather in a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
QUESTION = {"role": "user", "content": "What is the weather in Paris?"}


def record(name, fn):
    try:
        out[name] = {"ok": True, "value": fn()}
    except anthropic.APIStatusError as e:
        out[name] = {"ok": False, "error": type(e).__name__, "status": e.status_code,
                     "type": (e.body or {}).get("error", {}).get("type") if isinstance(e.body, dict) else None,
                     "retry_after": e.response.headers.get("retry-after"), "message": e.message}
    except anthropic.APIError as e:  # errors inside a stream carry no status
        out[name] = {"ok": False, "error": type(e).__name__, "message": e.message}
    except Exception as e:  # a parse failure in the SDK is what this suite exists to catch
        out[name] = {"ok": False, "error": type(e).__name__, "message": str(e)}


def summary(m):
    return {"id": m.id, "model": m.model, "stop_reason": m.stop_reason,
            "content": [b.model_dump(exclude_none=True) for b in m.content], "usage": m.usage.model_dump(exclude_none=True)}


def tool_turns(model, stream):
    """The two steps: the tool_use answer, then (after the tool's result) the final one."""
    def ask(messages):
        kwargs = {"model": model, "max_tokens": 256, "tools": [TOOL], "messages": messages}
        if not stream:
            return client.messages.create(**kwargs)
        with client.messages.stream(**kwargs) as s:
            events = [e.type for e in s]
            final = s.get_final_message()
        out.setdefault(f"events_{model}", events)
        return final

    first = ask([QUESTION])
    use = next(b for b in first.content if b.type == "tool_use")
    second = ask([QUESTION, {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "Sunny, 24 °C"}]}])
    return [summary(first), summary(second)]


for model in ["claude-native", "claude-translated"]:
    record(f"create_{model}", lambda model=model: tool_turns(model, stream=False))
    record(f"stream_{model}", lambda model=model: tool_turns(model, stream=True))
    record(f"count_{model}", lambda model=model: client.messages.count_tokens(model=model, messages=[QUESTION]).input_tokens)

record("bad_key", lambda: Anthropic(base_url=origin, api_key="sk-wrong", max_retries=0).messages.create(
    model="claude-native", max_tokens=8, messages=[QUESTION]))
record("unknown_model", lambda: client.messages.create(model="claude-x-nowhere", max_tokens=8, messages=[QUESTION]))
record("forbidden_model", lambda: client.messages.create(model="claude-forbidden", max_tokens=8, messages=[QUESTION]))
record("no_max_tokens", lambda: client.post("/v1/messages", cast_to=object, body={"model": "claude-native", "messages": [QUESTION]}))
limited = Anthropic(base_url=origin, api_key=limited_key, max_retries=0)
record("limited_first", lambda: limited.messages.create(model="claude-native", max_tokens=8, messages=[QUESTION]).type)
record("limited_second", lambda: limited.messages.create(model="claude-native", max_tokens=8, messages=[QUESTION]).type)


def cut(model):
    with client.messages.stream(model=model, max_tokens=64, messages=[QUESTION]) as s:
        return s.get_final_message().id


for model in ["claude-x-cut-native", "claude-x-cut-translated"]:
    record(f"cut_{model}", lambda model=model: cut(model))
print(json.dumps(out))
