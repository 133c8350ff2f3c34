"""What openai-python sees of chat completions answered by an Anthropic backend (the gateway's chat -> Claude
translation): each call's parsed values printed as one JSON object for openai-python-claude.test.ts. argv: base_url
api_key. Models: extra-claude (a weather tool round trip), extra-structured (JSON text), extra-throttled (429 twice,
then an answer), extra-cut (a stream the backend drops). Errors are recorded, not raised."""
import json
import sys

import openai
from openai import OpenAI
from pydantic import BaseModel

base_url, api_key = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=20)
out = {"sdk": openai.__version__}
QUESTION = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is the weather in Paris?"}]


class City(BaseModel):
    city: str
    celsius: float


class GetWeather(BaseModel):
    city: str


TOOL = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                         "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def record(name, fn):
    try:
        out[name] = {"ok": True, "value": fn()}
    except openai.APIStatusError as e:
        out[name] = {"ok": False, "error": type(e).__name__, "status": e.status_code, "code": e.code, "param": getattr(e, "param", None),
                     "retry_after": e.response.headers.get("retry-after"), "message": e.message}
    except openai.APIError as e:  # errors inside a stream carry no status
        out[name] = {"ok": False, "error": type(e).__name__, "message": e.message}
    except Exception as e:  # a parse failure in the SDK is what this suite exists to catch
        out[name] = {"ok": False, "error": type(e).__name__, "message": str(e)}


def round_trip():
    first = client.chat.completions.create(model="extra-claude", messages=QUESTION, tools=[TOOL], max_completion_tokens=300)
    call = first.choices[0].message.tool_calls[0]
    # The message object itself goes back, as Python code usually does: the SDK sends every member it parsed.
    follow = [*QUESTION, first.choices[0].message,
              {"role": "tool", "tool_call_id": call.id, "content": "18°C, sunny"}]
    second = client.chat.completions.create(model="extra-claude", messages=follow, tools=[TOOL])
    return {"id": first.id, "finish": first.choices[0].finish_reason, "call": call.model_dump(), "usage": first.usage.model_dump(),
            "answer": second.choices[0].message.content, "finish2": second.choices[0].finish_reason}


def streamed():
    chunks, text, usage, calls = 0, "", None, {}
    stream = client.chat.completions.create(model="extra-claude", messages=QUESTION, tools=[TOOL], stream=True,
                                            stream_options={"include_usage": True})
    for c in stream:
        chunks += 1
        for choice in c.choices:
            text += choice.delta.content or ""
            for t in choice.delta.tool_calls or []:
                calls.setdefault(t.index, {"id": None, "name": None, "arguments": ""})
                calls[t.index]["id"] = calls[t.index]["id"] or t.id
                calls[t.index]["name"] = calls[t.index]["name"] or (t.function.name if t.function else None)
                calls[t.index]["arguments"] += (t.function.arguments or "") if t.function else ""
        if c.usage:
            usage = c.usage.model_dump()
    return {"chunks": chunks, "text": text, "calls": list(calls.values()), "usage": usage}


def parse():
    r = client.chat.completions.parse(model="extra-structured", messages=QUESTION, response_format=City)
    return {"parsed": r.choices[0].message.parsed.model_dump(), "refusal": r.choices[0].message.refusal}


def parse_stream():
    with client.chat.completions.stream(model="extra-structured", messages=QUESTION, response_format=City) as stream:
        done = [e.parsed.model_dump() for e in stream if e.type == "content.done"]
        final = stream.get_final_completion()
    return {"done": done, "parsed": final.choices[0].message.parsed.model_dump()}


def stream_helper(helper):
    """The stream helper with a strict pydantic tool: the SDK parses the arguments it assembles."""
    tool = openai.pydantic_function_tool(GetWeather, name="get_weather", description="The weather in a city")
    with helper(model="extra-claude", messages=QUESTION, tools=[tool], stream_options={"include_usage": True}) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_completion()
    call = final.choices[0].message.tool_calls[0]
    return {"types": sorted(set(types)), "content": final.choices[0].message.content, "finish": final.choices[0].finish_reason,
            "call_id": call.id, "parsed_arguments": call.function.parsed_arguments.model_dump(), "usage": final.usage.model_dump()}


def retried():
    retrying = OpenAI(base_url=base_url, api_key=api_key, max_retries=1, timeout=20)
    r = retrying.chat.completions.create(model="extra-throttled", messages=[{"role": "user", "content": "hi"}])
    return r.choices[0].message.content


record("round_trip", round_trip)
record("stream", streamed)
record("parse", parse)
record("parse_stream", parse_stream)
record("stream_helper", lambda: stream_helper(client.chat.completions.stream))
record("beta_stream_helper", lambda: stream_helper(client.beta.chat.completions.stream))
# The fake answers 429 twice: the first call (no retries) raises, the second's one retry gets the answer.
record("throttled", lambda: client.chat.completions.create(model="extra-throttled", messages=[{"role": "user", "content": "hi"}]))
record("retried", retried)
record("n2", lambda: client.chat.completions.create(model="extra-claude", messages=QUESTION, n=2))
record("cut", lambda: [c for c in client.chat.completions.create(model="extra-cut", messages=QUESTION, stream=True)])
print(json.dumps(out))
