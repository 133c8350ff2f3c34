"""openai-python's typed helpers through the gateway, as an agent built on it uses them: raw responses and their
headers, structured parsing (beta.chat.completions.parse with a pydantic model and a strict function tool), the
Responses stream helper on a function call and responses.parse. Each result is printed as one JSON object for
test/clients/openai-python-agent.test.ts to assert on. argv: base_url api_key. Errors are recorded, not raised."""
import json
import sys

import openai
import pydantic
from openai import OpenAI

base_url, api_key = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=20)
out = {"sdk": openai.__version__}


class City(pydantic.BaseModel):
    city: str
    temperatureC: float
    conditions: list[str]


class GetWeather(pydantic.BaseModel):
    city: str


def record(name, fn):
    try:
        out[name] = {"ok": True, "value": fn()}
    except Exception as e:  # a parse failure in the SDK is what this suite exists to catch
        out[name] = {"ok": False, "error": type(e).__name__, "message": str(e)}


def raw():
    r = client.chat.completions.with_raw_response.create(model="object", messages=[{"role": "user", "content": "hi"}])
    parsed = r.parse()
    with client.chat.completions.with_streaming_response.create(
        model="object", stream=True, messages=[{"role": "user", "content": "hi"}]
    ) as s:
        stream_headers = dict(s.headers)
        chunks = sum(1 for _ in s.parse())
    return {"status": r.status_code, "headers": dict(r.headers), "request_id": parsed._request_id,
            "content": parsed.choices[0].message.content, "stream_headers": stream_headers, "stream_chunks": chunks}


def parse():
    r = client.beta.chat.completions.parse(model="object", messages=[{"role": "user", "content": "Paris?"}], response_format=City)
    return r.choices[0].message.parsed.model_dump()


def parse_tool():
    r = client.chat.completions.parse(model="tools", messages=[{"role": "user", "content": "Weather in Paris?"}],
                                      tools=[openai.pydantic_function_tool(GetWeather, name="get_weather")])
    call = r.choices[0].message.tool_calls[0]
    return {"name": call.function.name, "parsed": call.function.parsed_arguments.model_dump(), "finish": r.choices[0].finish_reason}


def responses_stream_tool():
    tool = {"type": "function", "name": "get_weather", "parameters": GetWeather.model_json_schema(), "strict": False}
    with client.responses.stream(model="responses", input="Weather in Paris?", tools=[tool]) as stream:
        events = [e.type for e in stream]
        final = stream.get_final_response()
    call = final.output[0]
    return {"events": events, "id": final.id, "type": call.type, "name": call.name, "arguments": json.loads(call.arguments),
            "usage": final.usage.model_dump()}


def responses_parse():
    r = client.responses.parse(model="responses", input="Paris as JSON", text_format=City)
    return {"parsed": r.output_parsed.model_dump(), "id": r.id}


record("raw", raw)
record("parse", parse)
record("parse_tool", parse_tool)
record("responses_stream_tool", responses_stream_tool)
record("responses_parse", responses_parse)
print(json.dumps(out))
