// Prices and money limits through compile: decimal strings in, micro-units in the routing table, InvalidSpec for
// anything that is not a plain decimal of at most six places.
import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import type { RawObject } from './resources.js';

const v = 'modelgateway.io/v1alpha1';
const backend = { name: 'up', baseURL: 'http://127.0.0.1:9/v1' };
const route = (name: string, backendFields: Record<string, unknown>): RawObject => ({
  apiVersion: v,
  kind: 'ModelRoute',
  metadata: { name },
  spec: { backends: [{ ...backend, ...backendFields }] },
});
const group = (name: string, limits: Record<string, unknown>): RawObject => ({
  apiVersion: v,
  kind: 'Group',
  metadata: { name },
  spec: { models: ['*'], limits },
});
const token = (name: string, digit: string, limits?: Record<string, unknown>): RawObject => ({
  apiVersion: v,
  kind: 'GatewayToken',
  metadata: { name },
  spec: { group: 'g', sha256: digit.repeat(64), ...(limits ? { limits } : {}) },
});
const run = (objects: RawObject[]) => compile(objects.map((object) => ({ object })));
const status = (r: ReturnType<typeof run>, ref: string) => r.statuses.find((s) => s.ref === ref)!;
const accepted = (r: ReturnType<typeof run>, ref: string) => status(r, ref).conditions.find((c) => c.type === 'Accepted')!;

describe('compile: pricing', () => {
  it('compiles every price to micro-units and leaves unset prices undefined', () => {
    const r = run([
      route('claude', {
        pricing: {
          inputPerMTok: '3.00',
          cachedInputPerMTok: '0.30',
          cacheWritePerMTok: '3.75',
          cacheWrite1hPerMTok: '6',
          outputPerMTok: '15.00',
          imagePer: [{ size: '1024x1024', quality: 'hd', price: '0.08' }, { price: '0.04' }],
          audioInputPerSecond: '0.0001',
          speechPerMChars: '15',
          videoPerSecond: '0.000001',
        },
      }),
      route('local', {}),
      route('partial', { pricing: { inputPerMTok: '0.15' } }),
    ]);
    expect(r.table.routes.get('claude')!.backends[0]!.pricing).toEqual({
      inputPerMTok: 3_000_000,
      cachedInputPerMTok: 300_000,
      cacheWritePerMTok: 3_750_000,
      cacheWrite1hPerMTok: 6_000_000,
      outputPerMTok: 15_000_000,
      imagePer: [{ size: '1024x1024', quality: 'hd', price: 80_000 }, { price: 40_000 }],
      audioInputPerSecond: 100,
      speechPerMChars: 15_000_000,
      videoPerSecond: 1,
    });
    expect(r.table.routes.get('local')!.backends[0]!.pricing).toBeUndefined();
    expect(r.table.routes.get('partial')!.backends[0]!.pricing).toEqual({ inputPerMTok: 150_000 });
  });

  it.each([
    ['an exponent', { inputPerMTok: '1e-7' }, 'pricing.inputPerMTok'],
    ['seven decimal places', { outputPerMTok: '0.0000001' }, 'pricing.outputPerMTok'],
    ['a negative price', { inputPerMTok: '-1' }, 'pricing.inputPerMTok'],
    ['a bare number (YAML 3.00 unquoted)', { inputPerMTok: 3 }, 'pricing.inputPerMTok'],
    ['a trailing point', { speechPerMChars: '1.' }, 'pricing.speechPerMChars'],
    ['a leading point', { videoPerSecond: '.5' }, 'pricing.videoPerSecond'],
    ['a billion', { audioInputPerSecond: '1000000000' }, 'pricing.audioInputPerSecond'],
    ['a bad image price', { imagePer: [{ size: '1024x1024', price: 'NaN' }] }, 'pricing.imagePer.0.price'],
  ])('refuses %s with InvalidSpec naming the field', (_what, pricing, path) => {
    const a = accepted(run([route('m', { pricing })]), 'ModelRoute/default/m');
    expect(a).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(a.message).toContain(`spec.backends.0.${path}: a decimal string in quotes such as "3.00"`);
  });

  it('refuses an empty pricing, an empty imagePer, an image entry without price and an unknown field', () => {
    for (const pricing of [{}, { imagePer: [] }, { imagePer: [{ size: '1024x1024' }] }, { inputPerMillion: '1' }]) {
      const r = run([route('m', { pricing })]);
      expect(accepted(r, 'ModelRoute/default/m'), JSON.stringify(pricing)).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
      expect(r.table.routes.size).toBe(0);
    }
  });
});

describe('compile: money limits', () => {
  it('compiles costPerDay and costPerMonth with their block warnAt for the group, its per-model entries and tokens', () => {
    const r = run([
      route('gpt-4o-mini', {}),
      route('claude', {}),
      group('g', {
        costPerMonth: '2500.00',
        warnAt: 80,
        tokensPerDay: 1000,
        models: [
          { model: 'claude', costPerDay: '10.5' },
          { model: '*', requestsPerMinute: 5 },
        ],
      }),
      token('t', 'a', { costPerDay: '0.000001', costPerMonth: '20' }),
      token('u', 'b'),
    ]);
    const t = r.table.tokensByDigest.get('a'.repeat(64))!;
    expect(t.group.moneyLimits).toEqual([{ scope: 'group/default/g', field: 'costPerMonth', window: 'month', limit: 2_500_000_000, warnAt: 80 }]);
    expect(t.group.modelMoneyLimits.get('claude')).toEqual([
      { scope: 'group/default/g/model/claude', field: 'costPerDay', window: 'day', limit: 10_500_000, warnAt: undefined },
    ]);
    expect(t.group.modelMoneyLimits.has('gpt-4o-mini')).toBe(false);
    // A per-model entry of money limits only adds no request or token rule for its model.
    expect(t.group.modelLimits.has('claude')).toBe(false);
    expect(t.group.modelLimits.get('gpt-4o-mini')!.map((l) => l.field)).toEqual(['requestsPerMinute']);
    // Money limits never enter the rules the limiter counts as requests or tokens.
    expect(t.limits.map((l) => l.field)).toEqual(['tokensPerDay']);
    expect(t.moneyLimits.map((l) => [l.scope, l.field, l.limit])).toEqual([
      ['token/default/t', 'costPerDay', 1],
      ['token/default/t', 'costPerMonth', 20_000_000],
      ['group/default/g', 'costPerMonth', 2_500_000_000],
    ]);
    expect(r.table.tokensByDigest.get('b'.repeat(64))!.moneyLimits).toBe(t.group.moneyLimits);
    expect(status(r, 'Group/default/g').warnings).toEqual([]);
  });

  it('refuses bad amounts and a warnAt outside 1-100 with InvalidSpec', () => {
    const r = run([
      group('a', { costPerDay: '5.1234567' }),
      group('b', { models: [{ model: '*', costPerMonth: '-3' }] }),
      group('c', { costPerMonth: '1', warnAt: 0 }),
      group('d', { costPerMonth: '1', warnAt: 101 }),
      group('e', { costPerMonth: 100 }),
      group('g', {}),
      token('t', 'a', { costPerMonth: '1e3' }),
    ]);
    expect(accepted(r, 'Group/default/a').message).toContain('spec.limits.costPerDay: a decimal string in quotes');
    expect(accepted(r, 'Group/default/b').message).toContain('spec.limits.models.0.costPerMonth: a decimal string in quotes');
    expect(accepted(r, 'Group/default/c').message).toMatch(/spec\.limits\.warnAt: Too small/);
    expect(accepted(r, 'Group/default/d').message).toMatch(/spec\.limits\.warnAt: Too big/);
    expect(accepted(r, 'Group/default/e').message).toContain('spec.limits.costPerMonth: a decimal string in quotes');
    expect(accepted(r, 'GatewayToken/default/t')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(accepted(r, 'Group/default/g').status).toBe('True');
  });

  it('warns, without refusing the route, about each price its endpoints can never use', () => {
    const withEndpoints = (name: string, endpoints: string[], pricing: Record<string, unknown>): RawObject => {
      const r = route(name, { pricing });
      return { ...r, spec: { ...(r.spec as object), endpoints } };
    };
    const r = run([
      // OpenAI's chat reports cache writes (cache_write_tokens), but no 1-hour ones.
      withEndpoints('chat', ['chat.completions'], {
        inputPerMTok: '1',
        outputPerMTok: '2',
        imagePer: [{ price: '0.04' }],
        cacheWritePerMTok: '3',
        cacheWrite1hPerMTok: '6',
      }),
      withEndpoints('embed', ['embeddings'], { inputPerMTok: '0.02', outputPerMTok: '1', videoPerSecond: '0.1', audioInputPerSecond: '0.001' }),
      withEndpoints('claude', ['messages'], { inputPerMTok: '3', cacheWritePerMTok: '3.75', cacheWrite1hPerMTok: '6' }),
      route('all', { imagePer: [{ price: '0.04' }], speechPerMChars: '15', videoPerSecond: '0.1' }),
      // Image and audio token prices where no answer reports such tokens: Responses and Messages report neither.
      withEndpoints('text', ['responses', 'messages'], {
        inputPerMTok: '1',
        imageInputPerMTok: '10',
        imageOutputPerMTok: '40',
        audioInputPerMTok: '40',
        audioOutputPerMTok: '80',
      }),
      withEndpoints('audio', ['chat.completions', 'audio.transcriptions'], { audioInputPerMTok: '40', audioOutputPerMTok: '80' }),
      // gpt-4o-mini-tts: text input and audio output tokens, or characters.
      withEndpoints('tts', ['audio.speech'], { inputPerMTok: '0.6', audioOutputPerMTok: '12', speechPerMChars: '15' }),
    ]);
    expect(status(r, 'ModelRoute/default/tts').warnings).toEqual([]);
    expect(status(r, 'ModelRoute/default/text').warnings).toEqual([
      'backend "up": pricing.imageInputPerMTok can never apply, since the route serves none of images.generations, images.edits',
      'backend "up": pricing.imageOutputPerMTok can never apply, since the route serves none of images.generations, images.edits',
      'backend "up": pricing.audioInputPerMTok can never apply, since the route serves none of chat.completions, audio.transcriptions',
      'backend "up": pricing.audioOutputPerMTok can never apply, since the route serves none of chat.completions, audio.speech',
    ]);
    expect(status(r, 'ModelRoute/default/audio').warnings).toEqual([]);
    expect(status(r, 'ModelRoute/default/chat').warnings).toEqual([
      'backend "up": pricing.cacheWrite1hPerMTok can never apply, since the route does not serve messages',
      'backend "up": pricing.imagePer can never apply, since the route serves none of images.generations, images.edits',
    ]);
    expect(status(r, 'ModelRoute/default/embed').warnings).toEqual([
      'backend "up": pricing.outputPerMTok can never apply, since the route serves none of chat.completions, responses, messages, images.generations, images.edits, audio.transcriptions, audio.translations',
      'backend "up": pricing.audioInputPerSecond can never apply, since the route serves none of audio.transcriptions, audio.translations',
      'backend "up": pricing.videoPerSecond can never apply, since the route does not serve videos',
    ]);
    expect(status(r, 'ModelRoute/default/claude').warnings).toEqual([]);
    expect(status(r, 'ModelRoute/default/all').warnings).toEqual([]); // every family, by default
    // The routes still serve, and bill what they can.
    expect(accepted(r, 'ModelRoute/default/chat').status).toBe('True');
    expect(r.table.routes.get('chat')!.backends[0]!.pricing?.imagePer).toEqual([{ price: 40_000 }]);
  });

  it('warns about a warnAt with no money limit beside it', () => {
    const r = run([
      route('x', {}),
      group('g', { warnAt: 50, tokensPerDay: 5, models: [{ model: 'x', warnAt: 90 }] }),
      token('t', 'a', { warnAt: 10, requestsPerMinute: 1 }),
    ]);
    expect(status(r, 'Group/default/g').warnings).toEqual([
      'limits.warnAt applies to costPerDay and costPerMonth, and this block sets neither',
      'limits.models[0].warnAt applies to costPerDay and costPerMonth, and this block sets neither',
    ]);
    expect(status(r, 'GatewayToken/default/t').warnings).toEqual(['limits.warnAt applies to costPerDay and costPerMonth, and this block sets neither']);
  });
});
