#!/usr/bin/env -S node --max-semi-space-size=4 --expose-gc
// The model-gateway executable: `serve` (default) and `check`. Dispatch only; each subcommand lives in src/cli/.
// The shebang passes the same Node flags as the container image's entry point: a cap on V8's young generation
// (Node 24 lets it grow to 2 × 64 MB and an idle process keeps the pages), ~40 MB less RSS at idle for more
// frequent young collections under load (docs/performance.md); and --expose-gc, for the memory release after
// config compiles (src/runtime/memory-release.ts). `node dist/cli.js` does not read the shebang.
import { runCheck } from './cli/check.js';
import { runServe } from './cli/serve.js';

const [first, ...rest] = process.argv.slice(2);
const code = first === 'check' ? await runCheck(rest) : first === 'serve' ? await runServe(rest) : await runServe(first === undefined ? [] : [first, ...rest]);
if (code !== undefined) process.exitCode = code;
