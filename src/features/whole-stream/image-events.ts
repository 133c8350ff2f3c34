// A whole images answer as the events of an images stream, for an upstream that answered a stream request whole:
// one `image_generation.completed` (`image_edit.completed` for an edit) per image, with the answer's size, quality,
// background and format, and its usage on the last. An image the upstream gave only as a URL (a model that cannot
// stream) keeps its `url` in the event, where a stream has `b64_json`: nothing of the answer is lost. Pure.

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The events of `answer`, or undefined when it is not an images answer (a `data` list of images). */
export function imageEvents(answer: unknown, kind: 'generation' | 'edit'): string | undefined {
  if (!isObject(answer) || !Array.isArray(answer['data']) || !answer['data'].every(isObject)) return undefined;
  const { data, created, usage, ...shared } = answer;
  const type = kind === 'edit' ? 'image_edit.completed' : 'image_generation.completed';
  const images = data as Json[];
  let out = '';
  images.forEach((image, i) => {
    const last = i === images.length - 1;
    const event = { type, ...shared, ...image, created_at: created, ...(last && usage !== undefined ? { usage } : {}) };
    out += `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
  });
  return out;
}
