// A fetch for the SDKs that records the raw event-stream text it delivers and calls `onKeepAlive` once the
// gateway's first keep-alive comment has arrived (so an upstream can answer after the 200 went out), and the
// request id of the last response.
export function recordingFetch(onKeepAlive: () => void = () => {}) {
  const seen = { text: '', requestId: null as string | null };
  const decoder = new TextDecoder();
  const fetchFn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    seen.requestId = res.headers.get('x-request-id');
    if (!res.body) return res;
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen.text += decoder.decode(chunk, { stream: true });
        if (seen.text.includes(': keep-alive')) onKeepAlive();
        controller.enqueue(chunk);
      },
    });
    return new Response(res.body.pipeThrough(tap), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return { fetch: fetchFn as typeof fetch, seen };
}
