"""openai-python's media calls through the gateway, as test/http/media-python.test.ts answers them from a fake: a
transcription form with array and object fields, embeddings with its default base64 (decoded by the SDK) and
dimensions, an edit of two images answered by URL, and speech as events. Printed as one JSON object.
argv: base_url api_key."""
import json
import sys

import openai
from openai import OpenAI

base_url, key = sys.argv[1:3]
client = OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=20)
out = {}


def record(name, fn):
    try:
        out[name] = {"ok": True, "value": fn()}
    except openai.APIStatusError as e:
        out[name] = {"ok": False, "error": type(e).__name__, "status": e.status_code, "code": e.code, "message": e.message}
    except Exception as e:  # a parse failure in the SDK is what this test exists to catch
        out[name] = {"ok": False, "error": type(e).__name__, "message": str(e)}


def transcription():
    t = client.audio.transcriptions.create(
        model="whisper-1", file=("a.wav", b"RIFF" + bytes(60), "audio/wav"), response_format="verbose_json",
        timestamp_granularities=["word", "segment"], include=["logprobs"],
        chunking_strategy={"type": "server_vad", "silence_duration_ms": 500})
    return {"text": t.text, "words": [w.word for w in t.words or []], "duration": t.duration}


def embeddings():
    e = client.embeddings.create(model="text-embedding-3-small", input=["a", "b"], dimensions=4)
    return {"vectors": [d.embedding for d in e.data], "tokens": e.usage.prompt_tokens}


def edit():
    img = ("a.png", b"\x89PNG\r\n\x1a\n" + bytes(16), "image/png")
    r = client.images.edit(model="org/image-model", prompt="merge", image=[img, img], n=2, size="512x512", response_format="url")
    return [d.url for d in r.data]


def speech_events():
    with client.audio.speech.with_streaming_response.create(model="tts-1", voice="alloy", input="hi", stream_format="sse") as r:
        return {"type": r.headers.get("content-type"), "text": r.read().decode()}


record("transcription", transcription)
record("embeddings", embeddings)
record("edit", edit)
record("speech_events", speech_events)
print(json.dumps(out))
