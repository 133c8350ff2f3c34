#!/usr/bin/env -S node --expose-gc
// The model-gateway executable: `serve` (default) and `check`. Dispatch only; each subcommand lives in src/cli/.
// The shebang passes the same Node flag as the container image's entry point: --expose-gc, for the memory release
// after config compiles (src/runtime/memory-release.ts; docs/performance.md says why the young generation keeps
// V8's default size). `node dist/cli.js` does not read the shebang.
// Each subcommand is loaded only when run: `check` needs none of the server's modules.
const [first, ...rest] = process.argv.slice(2);
const code =
  first === 'check'
    ? await (await import('./cli/check.js')).runCheck(rest)
    : await (await import('./cli/serve.js')).runServe(first === 'serve' ? rest : first === undefined ? [] : [first, ...rest]);
if (code !== undefined) process.exitCode = code;
