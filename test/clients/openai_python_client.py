"""What openai-python sees of the gateway: each call through the official SDK, its parsed values printed as one JSON
object for test/clients/openai-python.test.ts to assert on. argv: base_url api_key. Errors are recorded, not raised:
the test decides which are expected."""
import base64
import io
import json
import struct
import sys
import wave

import openai
from openai import OpenAI

base_url, api_key = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=20)
out = {"sdk": openai.__version__}


def record(name, fn):
    try:
        out[name] = {"ok": True, "value": fn()}
    except openai.APIStatusError as e:
        out[name] = {"ok": False, "error": type(e).__name__, "status": e.status_code, "code": e.code,
                     "retry_after": e.response.headers.get("retry-after"), "message": e.message}
    except openai.APIError as e:  # errors inside a stream carry no status
        out[name] = {"ok": False, "error": type(e).__name__, "code": getattr(e, "code", None), "message": e.message}
    except Exception as e:  # a parse failure in the SDK is what this suite exists to catch
        out[name] = {"ok": False, "error": type(e).__name__, "message": str(e)}


def models():
    return sorted(m.id for m in client.models.list())


def chat():
    r = client.chat.completions.create(model="demo-chat", messages=[{"role": "user", "content": "python says hi"}])
    return {"content": r.choices[0].message.content, "model": r.model, "finish": r.choices[0].finish_reason,
            "usage": r.usage.model_dump() if r.usage else None}


def chat_stream():
    text, usage, chunks = "", None, 0
    stream = client.chat.completions.create(model="demo-chat", stream=True, stream_options={"include_usage": True},
                                            messages=[{"role": "user", "content": "stream please"}])
    for c in stream:
        chunks += 1
        if c.choices:
            text += c.choices[0].delta.content or ""
        if c.usage:
            usage = c.usage.total_tokens
    return {"text": text, "chunks": chunks, "usage_total": usage}


def responses_roundtrip():
    first = client.responses.create(model="demo-chat", input="remember the word teapot")
    again = client.responses.retrieve(first.id)
    follow = client.responses.create(model="demo-chat", input="what was it?", previous_response_id=first.id)
    items = client.responses.input_items.list(first.id)
    return {"id": first.id, "text": first.output_text, "retrieved_id": again.id, "follow_prev": follow.previous_response_id,
            "follow_id": follow.id, "items": len(items.data)}


def responses_stream():
    with client.responses.stream(model="demo-chat", input="stream a response") as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    return {"first": types[0], "last": types[-1], "deltas": types.count("response.output_text.delta"),
            "final_id": final.id, "text": final.output_text}


def embeddings():
    floats = client.embeddings.create(model="demo-embed", input=["a", "b"])
    b64 = client.embeddings.create(model="demo-embed", input="a", encoding_format="base64")
    # Asked for explicitly, base64 stays a string in the SDK: little-endian float32s.
    raw = base64.b64decode(b64.data[0].embedding)
    decoded = struct.unpack(f"<{len(raw) // 4}f", raw)
    return {"count": len(floats.data), "dims": len(floats.data[0].embedding), "b64_dims": len(decoded),
            "same": [round(x, 5) for x in floats.data[0].embedding[:4]] == [round(x, 5) for x in decoded[:4]]}


def silence_wav():
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(struct.pack("<800h", *([0] * 800)))
    return buf.getvalue()


def audio():
    t = client.audio.transcriptions.create(model="demo-media", file=("silence.wav", silence_wav(), "audio/wav"))
    tr = client.audio.translations.create(model="demo-media", file=("silence.wav", silence_wav(), "audio/wav"))
    speech = client.audio.speech.create(model="demo-media", voice="alloy", input="hello")
    return {"transcription": t.text, "translation": tr.text, "speech_bytes": len(speech.content), "speech_riff": speech.content[:4].decode("latin1")}


def images():
    png = base64.b64decode(client.images.generate(model="demo-media", prompt="a dot", response_format="b64_json").data[0].b64_json)
    edit = client.images.edit(model="demo-media", image=("dot.png", png, "image/png"), prompt="bigger")
    return {"png": png[:4].decode("latin1"), "edit_items": len(edit.data)}


def videos():
    v = client.videos.create(model="demo-media", prompt="a wave")
    done = client.videos.poll(v.id, poll_interval_ms=100) if hasattr(client.videos, "poll") else client.videos.retrieve(v.id)
    content = client.videos.download_content(v.id)
    remix = client.videos.remix(v.id, prompt="slower")
    return {"id": v.id, "status": done.status, "same_id": done.id == v.id, "bytes": len(content.content), "remix_of": remix.remixed_from_video_id}


def bad_key():
    OpenAI(base_url=base_url, api_key="sk-wrong", max_retries=0).models.list()


record("models", models)
record("chat", chat)
record("chat_stream", chat_stream)
record("responses", responses_roundtrip)
record("responses_stream", responses_stream)
record("embeddings", embeddings)
record("audio", audio)
record("images", images)
record("videos", videos)
record("bad_key", bad_key)
record("unknown_model", lambda: client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}]))
record("rate_limited", lambda: client.chat.completions.create(model="limited", messages=[{"role": "user", "content": "x"}]))
record("chat_stream_cut", lambda: [c for c in client.chat.completions.create(model="cut", stream=True, messages=[{"role": "user", "content": "x"}])])
record("responses_stream_cut", lambda: [e.type for e in client.responses.create(model="cut", stream=True, input="x")])
print(json.dumps(out))
