// GET /v1/models and GET /v1/models/{model}: exactly the models the caller's token may use. The list body
// depends only on the (immutable) token, so it is serialised once per token per table and cached weakly. A request
// that carries anthropic-version (Anthropic's SDKs send it on every call: `models.list()`) gets Anthropic's shapes,
// listing the models it can use with the Messages API (those whose routes serve the messages family).
import type { Request, Response } from 'express';
import type { CompiledRoute, CompiledToken, RoutingTable } from '../../model/routing-table.js';
import { authenticatedOf } from '../exchange/exchange.js';
import { errors } from '../../model/errors.js';

interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

interface AnthropicModelObject {
  type: 'model';
  id: string;
  display_name: string;
  created_at: string;
}

function modelObject(route: CompiledRoute): ModelObject {
  return { id: route.model, object: 'model', created: route.created, owned_by: route.ownedBy };
}

function anthropicModelObject(route: CompiledRoute): AnthropicModelObject {
  return { type: 'model', id: route.model, display_name: route.model, created_at: new Date(route.created * 1000).toISOString() };
}

const listCache = new WeakMap<CompiledToken, string>();
const anthropicListCache = new WeakMap<CompiledToken, string>();

function modelList(table: RoutingTable, token: CompiledToken): string {
  let body = listCache.get(token);
  if (body === undefined) {
    const data: ModelObject[] = [];
    for (const id of token.models) {
      const route = table.routes.get(id);
      if (route) data.push(modelObject(route));
    }
    body = JSON.stringify({ object: 'list', data });
    listCache.set(token, body);
  }
  return body;
}

/** Anthropic's list page: the whole list in one (has_more false), so the SDK's pagination stops after it. */
function anthropicModelList(table: RoutingTable, token: CompiledToken): string {
  let body = anthropicListCache.get(token);
  if (body === undefined) {
    const data: AnthropicModelObject[] = [];
    for (const id of token.models) {
      const route = table.routes.get(id);
      if (route?.families.has('messages')) data.push(anthropicModelObject(route));
    }
    body = JSON.stringify({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
    anthropicListCache.set(token, body);
  }
  return body;
}

function speaksAnthropic(req: Request): boolean {
  return req.headers['anthropic-version'] !== undefined;
}

export function listModels(req: Request, res: Response): void {
  const x = authenticatedOf(res);
  res.type('application/json').send(speaksAnthropic(req) ? anthropicModelList(x.table, x.token) : modelList(x.table, x.token));
}

/** The wildcard param arrives as decoded path segments; %2F inside one segment is already a "/". */
export function retrieveModel(req: Request, res: Response): void {
  const x = authenticatedOf(res);
  const raw = (req.params as Record<string, string | string[]>)['model'];
  const id = Array.isArray(raw) ? raw.join('/') : (raw ?? '');
  const route = x.table.routes.get(id);
  if (!route) throw errors.modelNotFound(id);
  if (!x.token.modelSet.has(id)) throw errors.modelNotAllowed(id);
  res.json(speaksAnthropic(req) ? anthropicModelObject(route) : modelObject(route));
}
