// The demo backend must satisfy the official SDK for every family, deterministically.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoUpstream, type DemoUpstream } from './demo-upstream.js';
import { VIDEO_DONE_MS } from './demo-videos.js';

let demo: DemoUpstream;
let client: OpenAI;

beforeAll(async () => {
  demo = await startDemoUpstream();
  client = new OpenAI({ baseURL: demo.baseURL, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await demo.close();
});

describe('demo upstream', () => {
  it('listens on loopback only', () => {
    expect(new URL(demo.baseURL).hostname).toBe('127.0.0.1');
  });

  it('answers chat completions deterministically, echoing the prompt, with usage', async () => {
    const ask = () => client.chat.completions.create({ model: 'demo-chat', messages: [{ role: 'user', content: 'ping 42' }] });
    const [a, b] = [await ask(), await ask()];
    expect(a.choices[0]?.message.content).toContain('You said: ping 42');
    expect(a.choices[0]?.message.content).toBe(b.choices[0]?.message.content);
    expect(a.id).toBe(b.id);
    expect(a.usage?.prompt_tokens).toBe(2);
    expect(a.choices[0]?.finish_reason).toBe('stop');
  });

  it("echoes the last text part of the last user message: a coding agent's reminders come before its prompt", async () => {
    const r = await client.chat.completions.create({
      model: 'demo-chat',
      messages: [
        { role: 'user', content: 'an earlier turn' },
        { role: 'assistant', content: 'ok' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>context</system-reminder>' },
            { type: 'text', text: 'the prompt' },
            { type: 'text', text: ' ' },
          ],
        },
      ],
    });
    expect(r.choices[0]?.message.content).toMatch(/You said: the prompt$/);
  });

  it('streams chat completions chunk by chunk, with a usage chunk when asked, and honours max_tokens', async () => {
    const stream = await client.chat.completions.create({
      model: 'demo-chat',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'stream me' }] }],
    });
    let text = '';
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const c of stream) {
      chunks++;
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(text).toContain('You said: stream me');
    expect(chunks).toBeGreaterThan(5);
    expect(usage?.completion_tokens).toBeGreaterThan(0);

    const short = await client.chat.completions.create({ model: 'm', max_tokens: 3, messages: [{ role: 'user', content: 'x' }] });
    expect(short.choices[0]?.finish_reason).toBe('length');
    expect(short.usage?.completion_tokens).toBe(3);
  });

  it('serves responses: create, stream with a well-formed event sequence, retrieve, input items, delete', async () => {
    const r = await client.responses.create({ model: 'demo-chat', input: 'what is up', instructions: 'be brief' });
    expect(r.status).toBe('completed');
    expect(r.output_text).toContain('You said: what is up');

    const stream = client.responses.stream({ model: 'demo-chat', input: [{ role: 'user', content: 'streamed please' }] });
    const types: string[] = [];
    let deltas = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.output_text.delta') deltas += e.delta;
    }
    const final = await stream.finalResponse();
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.output_item.done');
    expect(final.output_text).toBe(deltas);

    const again = await client.responses.retrieve(r.id);
    expect(again.output_text).toBe(r.output_text);
    const items = await client.responses.inputItems.list(r.id);
    expect(items.data).toHaveLength(1);
    await client.responses.delete(r.id);
    await expect(client.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
  });

  it('returns deterministic unit-length embeddings (base64 as the SDK asks by default, and floats)', async () => {
    const a = await client.embeddings.create({ model: 'demo-embed', input: ['alpha', 'beta'] });
    const b = await client.embeddings.create({ model: 'demo-embed', input: 'alpha', encoding_format: 'float', dimensions: 256 });
    expect(a.data).toHaveLength(2);
    const va = a.data[0]!.embedding;
    expect(va).toHaveLength(256);
    expect(b.data[0]!.embedding.map((x) => Math.fround(x))).toEqual(va);
    expect(a.data[1]!.embedding).not.toEqual(va);
    expect(Math.hypot(...va)).toBeCloseTo(1, 4);
    const small = await client.embeddings.create({ model: 'demo-embed', input: 'alpha', dimensions: 8 });
    expect(small.data[0]!.embedding).toHaveLength(8);
  });

  it('generates PNG images and transcribes / translates uploads', async () => {
    const img = await client.images.generate({ model: 'demo-media', prompt: 'a red square', n: 2 });
    expect(img.data).toHaveLength(2);
    expect(Buffer.from(img.data![0]!.b64_json!, 'base64').subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const edit = await client.images.edit({
      model: 'demo-media',
      prompt: 'bluer',
      image: await toFile(Buffer.from('png-bytes'), 'in.png', { type: 'image/png' }),
    });
    expect(edit.data?.[0]?.b64_json).toBeTruthy();

    const audio = await toFile(Buffer.alloc(1234, 1), 'clip.wav', { type: 'audio/wav' });
    const t = await client.audio.transcriptions.create({ model: 'demo-media', file: audio });
    expect(t.text).toBe('Demo transcription of clip.wav (1234 bytes).');
    const tr = await client.audio.translations.create({ model: 'demo-media', file: await toFile(Buffer.alloc(10), 'x.mp3') });
    expect(tr.text).toContain('translation of x.mp3');
    const text = await client.audio.transcriptions.create({ model: 'demo-media', file: await toFile(Buffer.alloc(5), 'y.wav'), response_format: 'text' });
    expect(String(text)).toContain('y.wav (5 bytes)');
  });

  it('speaks a valid WAV of silence', async () => {
    const res = await client.audio.speech.create({ model: 'demo-media', voice: 'alloy', input: 'hello there' });
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const wav = Buffer.from(await res.arrayBuffer());
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.toString('latin1', 8, 12)).toBe('WAVE');
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44);
  });

  it('runs videos through queued → completed, serves content, remixes and deletes', async () => {
    const v = await client.videos.create({ model: 'demo-media', prompt: 'a cat surfing' });
    expect(v.status).toBe('queued');
    await expect(client.videos.downloadContent(v.id)).rejects.toMatchObject({ status: 400 });
    await new Promise((r) => setTimeout(r, VIDEO_DONE_MS + 50));
    const done = await client.videos.retrieve(v.id);
    expect(done).toMatchObject({ status: 'completed', progress: 100 });
    const content = await client.videos.downloadContent(v.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await content.arrayBuffer()).toString('latin1', 4, 8)).toBe('ftyp');
    const remix = await client.videos.remix(v.id, { prompt: 'a dog surfing' });
    expect(remix.remixed_from_video_id).toBe(v.id);
    await client.videos.delete(v.id);
    await expect(client.videos.retrieve(v.id)).rejects.toMatchObject({ status: 404 });
  });

  it('answers unknown routes and malformed JSON in OpenAI error shape', async () => {
    const res = await fetch(`${demo.baseURL}/nothing`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'unknown_url' } });
    const bad = await fetch(`${demo.baseURL}/chat/completions`, { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_json' } });
  });
});
