import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseManifests } from '../compile/manifests.js';
import { TableHolder } from '../model/routing-table.js';
import { ConfigPipeline } from '../runtime/pipeline.js';
import type { ConfigSnapshot } from '../sources/source.js';
import { DemoOnDemand, type StartedDemo, usesDemo } from './demo-on-demand.js';

const route = (name: string, baseURL: string) =>
  `apiVersion: modelgateway.io/v1alpha1\nkind: ModelRoute\nmetadata: {name: ${name}}\nspec: {backends: [{name: b, baseURL: "${baseURL}"}]}\n`;
const snapshot = (...routes: string[]): ConfigSnapshot => ({ objects: parseManifests(routes.join('---\n'), 'x.yaml').objects });
const silent = pino({ level: 'silent' });

function setup(start?: () => Promise<StartedDemo>) {
  const tables = new TableHolder();
  const pipeline = new ConfigPipeline({ tables, logger: silent });
  return { tables, demo: new DemoOnDemand(pipeline, start, silent) };
}

describe('DemoOnDemand', () => {
  it('tells a snapshot that uses demo:// from one that does not', () => {
    expect(usesDemo(snapshot(route('a', 'http://up.example/v1')))).toBe(false);
    expect(usesDemo(snapshot(route('a', 'http://up.example/v1'), route('b', 'demo://')))).toBe(true);
    expect(usesDemo({ objects: [{ object: { kind: 'ModelRoute', spec: { backends: [null, 'x'] } } }] })).toBe(false);
  });

  it('without demo:// routes, nothing starts and every snapshot applies at once', () => {
    let started = 0;
    const { tables, demo } = setup(async () => {
      started++;
      return { baseURL: 'http://127.0.0.1:1/v1', close: async () => {} };
    });
    demo.apply(snapshot(route('a', 'http://up.example/v1')));
    expect(tables.get()?.routes.has('a')).toBe(true); // synchronously
    expect(started).toBe(0);
    expect(demo.baseURL).toBeUndefined();
  });

  it('the first demo:// route starts it once; snapshots wait for it, in order, then apply at once again', async () => {
    let started = 0;
    let listen!: () => void;
    const { tables, demo } = setup(async () => {
      started++;
      await new Promise<void>((r) => (listen = r));
      return { baseURL: 'http://127.0.0.1:4321/v1', close: async () => {} };
    });
    demo.apply(snapshot(route('d', 'demo://')));
    demo.apply(snapshot(route('d', 'demo://'), route('e', 'http://up.example/v1')));
    expect(tables.get()).toBeUndefined(); // waiting for the demo backend to listen
    listen();
    await demo.settled();
    expect(started).toBe(1);
    expect([...tables.get()!.routes.keys()].sort()).toEqual(['d', 'e']); // the later snapshot won
    expect(tables.get()!.routes.get('d')!.backends[0]!.baseURL).toBe('http://127.0.0.1:4321/v1');
    demo.apply(snapshot(route('f', 'demo://')));
    expect(tables.get()!.routes.has('f')).toBe(true); // at once: the demo is up
    expect(started).toBe(1);
  });

  it('a demo that fails to start does not hold the configuration back', async () => {
    const { tables, demo } = setup(async () => {
      throw new Error('EADDRINUSE');
    });
    demo.apply(snapshot(route('d', 'demo://')));
    await demo.settled();
    expect(tables.get()?.routes.has('d')).toBe(true);
  });

  it('switched off, demo:// routes compile without it', () => {
    const { tables, demo } = setup(undefined);
    demo.apply(snapshot(route('d', 'demo://')));
    expect(tables.get()?.routes.has('d')).toBe(true);
  });
});
