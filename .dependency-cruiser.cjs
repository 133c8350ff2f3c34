// Import rules for src/ (checked by `npm run lint:imports`, part of `npm test`): the flow runs one way, from the
// model through config compilation and sources to the runtime and controller, and, separately, the data plane,
// which sees the config side only through model/. Composition (gateway/, cli/) wires the two together.
// Folder circles are checked too (test/architecture/imports.test.ts reads this tool's output, with folder-cycles.ts).
const layer = (name, mayImport) => ({
  name: `${name}-imports`,
  comment: `src/${name}/ may import only ${mayImport.join(', ') || 'itself'} (and node/npm modules)`,
  severity: 'error',
  from: { path: `^src/${name}/` },
  to: { path: '^src/', pathNot: [`^src/${name}/`, ...mayImport.map((m) => `^src/${m}/`)] },
});

/** dataplane/<name>/ may not import the data-plane folders above it. */
const inner = (name, above) => ({
  name: `dataplane-${name}-below-${above.join('-')}`,
  comment: `src/dataplane/${name}/ may not import ${above.map((a) => `dataplane/${a}/`).join(', ')} (the data plane's inner order)`,
  severity: 'error',
  from: { path: `^src/dataplane/${name}/` },
  to: { path: above.map((a) => `^src/dataplane/${a}/`) },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'no file imports itself through others', from: {}, to: { circular: true } },
    layer('observability', []),
    layer('model', []),
    layer('compile', ['model', 'observability']),
    layer('sources', ['compile', 'model', 'observability']),
    layer('runtime', ['sources', 'compile', 'model', 'observability']),
    layer('controller', ['runtime', 'sources', 'compile', 'model', 'observability']),
    layer('dataplane', ['model', 'observability']),
    layer('features', ['dataplane', 'model', 'observability']),
    layer('demo', []),
    layer('gateway', ['features', 'dataplane', 'controller', 'runtime', 'sources', 'compile', 'model', 'observability', 'demo']),
    // Inside the data plane: server → handlers → upstream → the rest (request, exchange, policy, observe, stream).
    inner('handlers', ['server']),
    inner('upstream', ['server', 'handlers']),
    ...['request', 'exchange', 'policy', 'observe', 'stream'].map((f) => inner(f, ['server', 'handlers', 'upstream'])),
    {
      name: 'opentelemetry-only-in-tracing',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/features/tracing/' },
      to: { path: 'node_modules/@opentelemetry/' },
      comment: 'the OpenTelemetry SDK stays in features/tracing/; the data plane reports through dataplane/exchange/trace-hooks.ts',
    },
    {
      name: 'one-call-path-to-upstreams',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/dataplane/handlers/upstream-call\\.ts$', '^src/dataplane/upstream/'] },
      to: { path: '^src/dataplane/upstream/forward\\.ts$' },
      comment: 'every upstream call goes through dataplane/handlers/upstream-call.ts, where its transforms (limits, usage, tracing) are assembled',
    },
    {
      name: 'nothing-imports-the-entry-points',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/cli\\.ts$', '^src/cli/'] },
      to: { path: ['^src/cli/', '^src/cli\\.ts$'] },
      comment: 'cli/ and cli.ts are the top: only cli.ts and cli/ itself import them',
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
