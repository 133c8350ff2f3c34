// GET /v1/models and GET /v1/models/{model}: exactly the models the caller's token may use. The list body
// depends only on the (immutable) token, so it is serialised once per token per table and cached weakly.
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

function modelObject(route: CompiledRoute): ModelObject {
  return { id: route.model, object: 'model', created: route.created, owned_by: route.ownedBy };
}

const listCache = new WeakMap<CompiledToken, string>();

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

export function listModels(_req: Request, res: Response): void {
  const x = authenticatedOf(res);
  res.type('application/json').send(modelList(x.table, x.token));
}

/** The wildcard param arrives as decoded path segments; %2F inside one segment is already a "/". */
export function retrieveModel(req: Request, res: Response): void {
  const x = authenticatedOf(res);
  const raw = (req.params as Record<string, string | string[]>)['model'];
  const id = Array.isArray(raw) ? raw.join('/') : (raw ?? '');
  const route = x.table.routes.get(id);
  if (!route) throw errors.modelNotFound(id);
  if (!x.token.modelSet.has(id)) throw errors.modelNotAllowed(id);
  res.json(modelObject(route));
}
