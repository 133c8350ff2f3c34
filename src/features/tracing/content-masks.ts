// What recorded content (--trace-content) is masked with: the credentials of every backend of the request's route,
// since the prompt goes to each attempt's backend and the answer comes from one of them. The credentials module
// keeps them as header text (latin1, one character per byte); content is decoded text, so they are decoded as UTF-8.
import { credentialsOf } from '../../dataplane/upstream/credentials.js';
import type { CompiledBackend, CompiledRoute } from '../../model/routing-table.js';

const byRoute = new WeakMap<CompiledRoute, readonly string[]>();
const byBackend = new WeakMap<CompiledBackend, readonly string[]>();

/** The texts to mask in a request's content: its route's backends' credentials, or the one backend's without a route. */
export function contentMasks(route: CompiledRoute | undefined, backend: CompiledBackend): readonly string[] {
  if (route === undefined || !route.backends.includes(backend)) {
    let masks = byBackend.get(backend);
    if (!masks) byBackend.set(backend, (masks = decoded(credentialsOf(backend).texts)));
    return masks;
  }
  let masks = byRoute.get(route);
  if (!masks) {
    byRoute.set(route, (masks = decoded(route.backends.flatMap((b) => credentialsOf(b).texts))));
  }
  return masks;
}

function decoded(texts: readonly string[]): readonly string[] {
  // Longest first: a form that contains another (an escaped key holds the key's parts) is masked whole.
  return [...new Set(texts.map((t) => Buffer.from(t, 'latin1').toString('utf8')))].sort((a, b) => b.length - a.length);
}
