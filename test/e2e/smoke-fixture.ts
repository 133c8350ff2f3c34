// What the smoke test expects of test/e2e/manifests/smoke.yaml (checked against the manifests by
// test/e2e/smoke-fixture.test.ts, so the two cannot drift).
export const SMOKE = {
  namespace: 'model-gateway',
  token: 'e2e-alice',
  key: 'sk-e2e-alice-4f2b9c7d1e8a6b3f',
  chatModel: 'e2e-chat',
  embeddingModel: 'e2e-embed',
  /** Outside the token's first group; inside the second. */
  restrictedModel: 'e2e-restricted',
  groupBefore: 'e2e-basic',
  groupAfter: 'e2e-full',
  modelsBefore: ['e2e-chat', 'e2e-embed'],
  modelsAfter: ['e2e-chat', 'e2e-embed', 'e2e-restricted'],
} as const;
