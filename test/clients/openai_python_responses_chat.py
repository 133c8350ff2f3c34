"""What openai-python sees of the Responses API answered by a chat completions backend (the gateway's Responses ->
chat translation): each call's parsed values printed as one JSON object for openai-python-responses-chat.test.ts.
argv: base_url api_key. Models: extra-chat (a weather tool round trip), extra-structured (JSON text), extra-cut (a
stream the backend drops). Errors are recorded, not raised."""
import json
import sys

import openai
from openai import OpenAI
from pydantic import BaseModel

base_url, api_key = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=20)
out = {"sdk": openai.__version__}
TOOL = {"type": "function", "name": "get_weather", "description": "The weather in a city.", "strict": False,
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


class City(BaseModel):
    city: str
    celsius: float


def record(name, fn):
    try:
        out[name] = {"ok": True, "value": fn()}
    except openai.APIStatusError as e:
        out[name] = {"ok": False, "error": type(e).__name__, "status": e.status_code, "code": e.code, "param": getattr(e, "param", None),
                     "message": e.message}
    except openai.APIError as e:  # errors inside a stream carry no status
        out[name] = {"ok": False, "error": type(e).__name__, "code": getattr(e, "code", None), "message": e.message}
    except Exception as e:  # a parse failure in the SDK is what this suite exists to catch
        out[name] = {"ok": False, "error": type(e).__name__, "message": str(e)}


def round_trip():
    first = client.responses.create(model="extra-chat", instructions="Be brief.", input="Weather in Paris?", tools=[TOOL],
                                    max_output_tokens=300)
    call = first.output[0]
    second = client.responses.create(model="extra-chat", tools=[TOOL], input=[
        # The output items themselves go back, as Python code usually does: the SDK sends every member it parsed.
        {"role": "user", "content": "Weather in Paris?"}, *first.output,
        {"type": "function_call_output", "call_id": call.call_id, "output": "18°C, sunny"}])
    return {"id": first.id, "status": first.status, "call": call.model_dump(exclude_none=True), "usage": first.usage.model_dump(),
            "text": second.output_text, "usage2": second.usage.model_dump()}


def streamed():
    events = list(client.responses.create(model="extra-chat", input="Weather in Paris?", tools=[TOOL], stream=True))
    done = events[-1].response
    return {"types": [e.type for e in events], "sequence": [e.sequence_number for e in events],
            "output": [o.model_dump(exclude_none=True) for o in done.output], "usage": done.usage.model_dump()}


def stream_helper():
    with client.responses.stream(model="extra-chat", tools=[TOOL], input=[
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "function_call", "call_id": "call_weather_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
            {"type": "function_call_output", "call_id": "call_weather_1", "output": "18°C, sunny"}]) as stream:
        deltas = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        final = stream.get_final_response()
    return {"deltas": deltas, "id": final.id, "status": final.status, "text": final.output_text, "usage": final.usage.model_dump()}


def parse():
    r = client.responses.parse(model="extra-structured", input="Weather in Paris?", text_format=City)
    return {"parsed": r.output_parsed.model_dump(), "text": r.output_text}


def parse_stream():
    with client.responses.stream(model="extra-structured", input="Weather in Paris?", text_format=City) as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    return {"parsed": final.output_parsed.model_dump()}


def parse_tool():
    """A strict function tool: the SDK parses the call's arguments it got back."""
    tool = {**TOOL, "strict": True, "parameters": {**TOOL["parameters"], "additionalProperties": False}}
    r = client.responses.parse(model="extra-chat", input="Weather in Paris?", tools=[tool])
    return {"parsed_arguments": r.output[0].parsed_arguments}


def cut():
    with client.responses.stream(model="extra-cut", input="Weather?") as stream:
        for _ in stream:
            pass


def retrieve():
    """The Response the gateway kept, retrieved, its input items listed, then deleted; a retrieve after it raises."""
    r = client.responses.create(model="extra-chat", input="Weather in Paris?", tools=[TOOL])
    again = client.responses.retrieve(r.id)
    items = [i.model_dump(exclude_none=True) for i in client.responses.input_items.list(r.id, order="asc")]
    deleted = client.responses.delete(r.id)  # the SDK returns None for a delete
    try:
        client.responses.retrieve(r.id)
        after = "found"
    except openai.NotFoundError as e:
        after = e.code
    return {"same": again.model_dump() == r.model_dump(), "items": items, "deleted": deleted, "after": after}


def previous_response():
    """The conversation continued by previous_response_id, as OpenAI's documentation writes it: the gateway kept it."""
    first = client.responses.create(model="extra-chat", input="Weather in Paris?", tools=[TOOL])
    second = client.responses.create(model="extra-chat", previous_response_id=first.id, tools=[TOOL], input=[
        {"type": "function_call_output", "call_id": first.output[0].call_id, "output": "18°C, sunny"}])
    return {"first": first.id, "previous_response_id": second.previous_response_id, "text": second.output_text}


record("round_trip", round_trip)
record("stream", streamed)
record("stream_helper", stream_helper)
record("parse", parse)
record("parse_stream", parse_stream)
record("parse_tool", parse_tool)
record("cut", cut)
record("web_search", lambda: client.responses.create(model="extra-chat", input="news?", tools=[TOOL, {"type": "web_search"}]))
record("retrieve", retrieve)
record("previous_response", previous_response)  # last: the test reads the backend's last request as its second turn
print(json.dumps(out))
