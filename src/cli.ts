#!/usr/bin/env -S node --max-semi-space-size=8
// The model-gateway executable: `serve` (default) and `check`. Dispatch only; each subcommand lives in src/cli/.
// The shebang's flag caps V8's young generation (Node 24 lets it grow to 2 × 64 MB): ~40 MB less RSS at idle for
// ~10 µs more garbage collection per request under load (README, Performance). `node dist/cli.js` does not read
// the shebang: pass the flag there too (node --max-semi-space-size=8 dist/cli.js serve, or NODE_OPTIONS).
import { runCheck } from './cli/check.js';
import { runServe } from './cli/serve.js';

const [first, ...rest] = process.argv.slice(2);
const code =
  first === 'check' ? await runCheck(rest)
  : first === 'serve' ? await runServe(rest)
  : await runServe(first === undefined ? [] : [first, ...rest]);
if (code !== undefined) process.exitCode = code;
