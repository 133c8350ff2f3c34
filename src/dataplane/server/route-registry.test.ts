import express from 'express';
import { describe, expect, it } from 'vitest';
import { RouteRegistry } from './route-registry.js';

describe('RouteRegistry', () => {
  it('knows the methods of literal, param and wildcard paths', () => {
    const app = express();
    const r = new RouteRegistry();
    const h = () => {};
    r.add(app, 'post', '/v1/chat/completions', h);
    r.add(app, 'get', '/v1/models/*model', h);
    r.add(app, 'get', '/v1/videos/:id', h);
    r.add(app, 'delete', '/v1/videos/:id', h);
    expect(r.allowed('/v1/chat/completions')).toEqual(['POST']);
    expect(r.allowed('/v1/models/org/name')).toEqual(['GET', 'HEAD']);
    expect(r.allowed('/v1/videos/abc')).toEqual(['DELETE', 'GET', 'HEAD']);
    expect(r.allowed('/v1/videos/abc/def')).toEqual([]);
    expect(r.allowed('/v1/chat')).toEqual([]);
  });
});
