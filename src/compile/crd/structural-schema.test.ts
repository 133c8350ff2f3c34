import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toStructuralSchema } from './structural-schema.js';

const convert = (s: z.ZodType) => toStructuralSchema(z.toJSONSchema(s, { io: 'input', target: 'openapi-3.0' }) as Record<string, unknown>);

describe('toStructuralSchema', () => {
  it('converts a newly added nested field generically (e.g. a retry policy) with bounds and defaults', () => {
    const out = convert(
      z
        .object({
          retry: z
            .object({ attempts: z.number().int().min(1).max(5).default(2).describe('tries'), on: z.array(z.enum(['429', '5xx'])).optional() })
            .strict()
            .optional(),
        })
        .strict(),
    ) as any;
    expect(out.additionalProperties).toBeUndefined();
    expect(out.properties.retry).toMatchObject({
      type: 'object',
      properties: { attempts: { type: 'integer', minimum: 1, maximum: 5, default: 2, description: 'tries' } },
    });
    expect(out.properties.retry.properties.on.items.enum).toEqual(['429', '5xx']);
  });

  it('keeps maps as additionalProperties and free-form values as preserve-unknown-fields', () => {
    const out = convert(z.object({ labels: z.record(z.string(), z.string()), extra: z.unknown() })) as any;
    expect(out.properties.labels).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    expect(out.properties.extra).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('emits an object with no fields as one that CEL can read: no properties map, unknown fields kept, none allowed', () => {
    const out = convert(z.object({ none: z.object({}).strict().optional(), open: z.object({}).optional() })) as any;
    expect(out.properties.none).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, maxProperties: 0 });
    expect(out.properties.open).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  });

  it("drops zod's date-time regex in favour of the format the API server checks", () => {
    const out = convert(z.object({ at: z.iso.datetime({ offset: true }) })) as any;
    expect(out.properties.at).toEqual({ type: 'string', format: 'date-time' });
  });

  it('merges unions of literals into one enum and drops implicit integer bounds', () => {
    const out = convert(z.object({ mode: z.union([z.literal('a'), z.literal('b')]), n: z.number().int() })) as any;
    expect(out.properties.mode).toEqual({ type: 'string', enum: ['a', 'b'] });
    expect(out.properties.n).toEqual({ type: 'integer' });
  });

  it('refuses shapes the API server would reject instead of emitting a broken CRD', () => {
    expect(() => convert(z.object({ u: z.union([z.string(), z.object({ a: z.string() })]) }))).toThrow(/unions/);
    const Node: z.ZodType = z.lazy(() => z.object({ child: Node.optional() }));
    expect(() => convert(z.object({ tree: Node }))).toThrow(/\$ref|\$defs|definitions/);
  });
});
