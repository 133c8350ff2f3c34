// Every x-kubernetes-validations rule of every CRD in crds/ must type-check, the way the API server compiles it
// when the CRD is applied: `self` (and `oldSelf`) typed from the schema node the rule sits on, objects with declared
// properties as message types with exactly those fields, additionalProperties as maps. A rule that does not compile
// makes the whole CRD unapplicable (a real v1.26 server refused `size(self)` on an object), and unit tests that only
// evaluate rules on sample values never notice. The walk covers any rule added later without touching this file.
// (A rule that compiles can still fail at admission on an object declared with no fields: crd-definitions.test.ts.)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ASTNode, Environment } from '@marcbachmann/cel-js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type SchemaNode, validationRules } from './validation-rules.js';

const CRDS = join(import.meta.dirname, '..', '..', '..', 'crds');

// CEL's reserved words, which Kubernetes escapes as __word__ when a property has that name.
const CEL_KEYWORDS = new Set(
  'true false null in as break const continue else for function if import let loop package namespace return var void while'.split(' '),
);

/** A property name as Kubernetes exposes it to CEL (its escaping rules); undefined when it cannot be reached. */
function celFieldName(name: string): string | undefined {
  if (CEL_KEYWORDS.has(name)) return `__${name}__`;
  const escaped = name.replaceAll('__', '__underscores__').replaceAll('.', '__dot__').replaceAll('-', '__dash__').replaceAll('/', '__slash__');
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(escaped) ? escaped : undefined;
}

/**
 * Declares the CEL type of a schema node in env (message types for objects with properties, registered before the
 * types that use them) and returns its name, following the API server's mapping of OpenAPI types to CEL types.
 */
function declare(env: Environment, node: SchemaNode, typeName: string): string {
  if (node['x-kubernetes-int-or-string'] || (node['x-kubernetes-preserve-unknown-fields'] && !node.properties)) return 'dyn';
  switch (node.type) {
    case 'string':
      if (node.format === 'byte') return 'bytes';
      if (node.format === 'duration') return 'google.protobuf.Duration';
      if (node.format === 'date' || node.format === 'date-time') return 'google.protobuf.Timestamp';
      return 'string';
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'array':
      return `list<${node.items ? declare(env, node.items, `${typeName}.items`) : 'dyn'}>`;
    case 'object': {
      if (typeof node.additionalProperties === 'object' && !node.properties)
        return `map<string, ${declare(env, node.additionalProperties, `${typeName}.additionalProperties`)}>`;
      const fields: Record<string, string> = {};
      for (const [name, sub] of Object.entries(node.properties ?? {})) {
        const field = celFieldName(name);
        if (field) fields[field] = declare(env, sub, `${typeName}.${field}`);
      }
      // Objects compare with == as the API server's objects do (for transition rules: self == oldSelf).
      env.registerType(typeName, { fields }).registerOperator(`${typeName} == ${typeName}`, (a: unknown, b: unknown) => a === b);
      return typeName;
    }
    default:
      throw new Error(`${typeName}: no CEL type for schema type ${String(node.type)}`);
  }
}

/** The source ranges of every has() call in an expression. */
function hasCalls(node: ASTNode, out: { start: number; end: number; arg: ASTNode }[] = []): typeof out {
  if (node.op === 'call' && node.args[0] === 'has') out.push({ start: node.start, end: node.end, arg: (node.args[1] as ASTNode[])[0]! });
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object' && 'op' in v) hasCalls(v as ASTNode, out);
  };
  visit(node.args);
  return out;
}

/**
 * The checker's has() only checks the root variable, while the API server refuses has(self.x) for an undeclared x:
 * so each has(a.b) is checked as the field selection dyn(a.b) it tests, in place (scopes of macros kept).
 */
function withHasAsSelection(env: Environment, rule: string): string {
  const calls = hasCalls(env.parse(rule).ast).sort((a, b) => b.start - a.start);
  let out = rule;
  for (const c of calls) out = `${out.slice(0, c.start)}(dyn(${rule.slice(c.arg.start, c.arg.end)}) != null)${out.slice(c.end)}`;
  return out;
}

/** Type-checks a rule on its schema node: undefined when it compiles to bool, else why not. */
function typeCheck(node: SchemaNode, rule: string): string | undefined {
  const env = new Environment();
  const selfType = declare(env, node, 'Self');
  env.registerVariable('self', selfType).registerVariable('oldSelf', selfType);
  for (const expression of [rule, withHasAsSelection(env, rule)]) {
    const r = env.check(expression);
    if (!r.valid) return r.error?.message ?? 'invalid';
    if (r.type !== 'bool') return `evaluates to ${r.type}, not bool`;
  }
  return undefined;
}

const RULES = readdirSync(CRDS)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .flatMap((f) => validationRules(parse(readFileSync(join(CRDS, f), 'utf8'))));

describe('CEL rules of the CRDs type-check against their schema', () => {
  it('finds the rules of every CRD', () => {
    const kinds = new Set(RULES.map((r) => r.kind));
    expect(kinds).toContain('GatewayToken');
    expect(kinds).toContain('ModelRoute');
    expect(RULES.length).toBeGreaterThanOrEqual(9);
  });

  it.each(RULES.map((r) => [`${r.kind} ${r.version} ${r.path || '(root)'}: ${r.rule}`, r] as const))('%s', (_name, r) => {
    expect(typeCheck(r.node, r.rule)).toBeUndefined();
  });
});

describe('the type check refuses what the API server refuses', () => {
  const limitEntry: SchemaNode = {
    type: 'object',
    properties: { model: { type: 'string' }, requestsPerMinute: { type: 'integer' }, window: { type: 'object', properties: {} } },
  };

  it('size(self) on an object with declared properties (the Group CRD defect)', () => {
    expect(typeCheck(limitEntry, 'size(self) > 1')).toMatch(/no matching overload for 'size/);
  });

  it('a field the schema does not declare, also inside has()', () => {
    expect(typeCheck(limitEntry, "self.modle == 'x'")).toMatch(/No such key: modle/);
    expect(typeCheck(limitEntry, 'has(self.modle)')).toMatch(/No such key: modle/);
    expect(typeCheck({ type: 'array', items: limitEntry }, 'self.all(e, has(e.window.size))')).toMatch(/No such key: size/);
  });

  it('a type mismatch and a rule that is not a bool', () => {
    expect(typeCheck(limitEntry, 'self.requestsPerMinute > "1"')).toMatch(/no such overload/);
    expect(typeCheck(limitEntry, 'self.model')).toBe('evaluates to string, not bool');
  });

  it('while admitting the same kinds of rule written correctly', () => {
    expect(typeCheck(limitEntry, 'has(self.model) && self.requestsPerMinute > 1 && self == oldSelf')).toBeUndefined();
    expect(typeCheck({ type: 'array', items: limitEntry }, 'size(self) > 1 && self.all(e, has(e.window))')).toBeUndefined();
    expect(typeCheck({ type: 'object', additionalProperties: { type: 'string' } }, 'size(self) > 1')).toBeUndefined();
    expect(typeCheck({ type: 'string', format: 'date-time' }, "self > timestamp('2020-01-01T00:00:00Z')")).toBeUndefined();
  });
});
