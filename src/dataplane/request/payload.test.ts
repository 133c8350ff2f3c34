import { describe, expect, it } from 'vitest';
import type { CompiledBackend } from '../../model/routing-table.js';
import { membersFor } from '../exchange/transform.js';
import { readJsonBody } from './json-body.js';
import { parseMultipart } from './multipart.js';
import { bodyBuilder, modelRename, type Payload, wantedMembers } from './payload.js';

const backend = (name: string, model: string) => ({ name, model }) as CompiledBackend;

async function json(text: string): Promise<Payload> {
  const raw = Buffer.from(text);
  const body = await readJsonBody(raw, wantedMembers([{ reads: ['previous_response_id', 'max_tokens', 'stream_options'] }]));
  return { kind: 'json', raw, json: body, model: body.string('model')! };
}

describe('bodyBuilder with the model rename transform', () => {
  it("sends the client's bytes when the backend's model is the public one", async () => {
    const p = await json('{"model":"pub","messages":[]}');
    const build = bodyBuilder(p, (b) => membersFor([modelRename('pub')], b));
    expect(build(backend('a', 'pub')).body).toBe(p.raw);
  });

  it('splices the upstream name in, once per distinct set of members', async () => {
    const p = await json('{"model":"pub","messages":[1]}');
    const build = bodyBuilder(p, (b) => membersFor([modelRename('pub')], b));
    const first = build(backend('a', 'up'));
    expect(JSON.parse(first.body.toString())).toEqual({ model: 'up', messages: [1] });
    expect(build(backend('b', 'up')).body).toBe(first.body); // the same copy: counted once against the budget
    expect(build(backend('c', 'other')).body).not.toBe(first.body);
  });

  it('members of other transforms go into every backend body, with the rename', async () => {
    const p = await json('{"model":"pub","previous_response_id":"sealed"}');
    const pin = { members: () => ({ previous_response_id: '"upstream-id"' }) };
    const build = bodyBuilder(p, (b) => membersFor([modelRename('pub'), pin], b));
    expect(JSON.parse(build(backend('a', 'pub')).body.toString())).toEqual({ model: 'pub', previous_response_id: 'upstream-id' });
    expect(JSON.parse(build(backend('b', 'up')).body.toString())).toEqual({ model: 'up', previous_response_id: 'upstream-id' });
  });

  it('a form is re-encoded only when the model changes', async () => {
    const raw = Buffer.from('--x\r\nContent-Disposition: form-data; name="model"\r\n\r\npub\r\n--x--\r\n');
    const form = await parseMultipart(raw, 'multipart/form-data; boundary=x');
    const p: Payload = { kind: 'multipart', raw, contentType: 'multipart/form-data; boundary=x', form, model: 'pub' };
    const build = bodyBuilder(p, (b) => membersFor([modelRename('pub')], b));
    expect(build(backend('a', 'pub')).body).toBe(raw);
    const renamed = build(backend('b', 'up'));
    expect(renamed.body.toString()).toContain('\r\n\r\nup\r\n');
    expect(build(backend('c', 'up'))).toBe(renamed);
  });
});

describe('wantedMembers', () => {
  it('reads the model, stream and what the features declare; an undeclared member is skipped unread', async () => {
    const raw = Buffer.from('{"model":"m","stream":true,"seconds":"8","max_tokens":5,"input":"hi"}');
    const body = await readJsonBody(raw, wantedMembers([{ reads: ['seconds'] }, { reads: ['max_tokens'] }]));
    expect([body.string('model'), body.isTrue('stream'), body.string('seconds'), body.integer('max_tokens')]).toEqual(['m', true, '8', 5]);
    expect(body.string('input')).toBeUndefined();
  });
});
