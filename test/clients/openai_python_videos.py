"""openai-python's video helpers across two gateway replicas that share the sealing key: create_and_poll through the
first (an input_reference upload, polled to completion on the sealed id), then download_content (video and
thumbnail), remix and delete through the second, and a key of another group asking for the same video. Printed as
one JSON object for test/http/videos-replicas.test.ts. argv: base_url_1 base_url_2 api_key other_group_key."""
import json
import sys

import openai
from openai import OpenAI

base1, base2, key, other_key = sys.argv[1:5]
one = OpenAI(base_url=base1, api_key=key, max_retries=0, timeout=20)
two = OpenAI(base_url=base2, api_key=key, max_retries=0, timeout=20)
other = OpenAI(base_url=base2, api_key=other_key, max_retries=0, timeout=20)
out = {}


def record(name, fn):
    try:
        out[name] = {"ok": True, "value": fn()}
    except openai.APIStatusError as e:
        out[name] = {"ok": False, "error": type(e).__name__, "status": e.status_code, "code": e.code, "message": e.message}
    except Exception as e:  # a parse failure in the SDK is what this test exists to catch
        out[name] = {"ok": False, "error": type(e).__name__, "message": str(e)}


state = {}


def create_and_poll():
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    v = one.videos.create_and_poll(model="sora-2", prompt="a wave", seconds="8",
                                   input_reference=("ref.png", png, "image/png"), poll_interval_ms=20)
    state["id"] = v.id
    return {"id": v.id, "status": v.status, "seconds": v.seconds, "progress": v.progress}


def download():
    video = two.videos.download_content(state["id"])
    thumb = two.videos.download_content(state["id"], variant="thumbnail")
    return {"video": len(video.content), "type": video.response.headers.get("content-type"),
            "thumbnail": len(thumb.content), "thumbnail_type": thumb.response.headers.get("content-type")}


def remix():
    r = two.videos.remix(state["id"], prompt="slower")
    return {"id": r.id, "remixed_from": r.remixed_from_video_id}


record("create_and_poll", create_and_poll)
record("download", download)
record("remix", remix)
record("other_group", lambda: other.videos.retrieve(state["id"]).id)
record("delete", lambda: two.videos.delete(state["id"]).deleted)
record("retrieve_deleted", lambda: one.videos.retrieve(state["id"]).id)
print(json.dumps(out))
