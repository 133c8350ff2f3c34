#!/usr/bin/env -S node --max-semi-space-size=8
// The model-gateway executable: `serve` (default) and `check`. Dispatch only; each subcommand lives in src/cli/.
// The shebang's flag caps V8's young generation (Node 24 lets it grow to 2 × 64 MB): ~45 MB less RSS at idle and
// far less under load, with no throughput cost measurable in `npm run bench`. `node dist/cli.js` does not read
// the shebang; the container image passes the same flag (see README, Performance).
import { runCheck } from './cli/check.js';
import { runServe } from './cli/serve.js';

const [first, ...rest] = process.argv.slice(2);
const code =
  first === 'check' ? await runCheck(rest)
  : first === 'serve' ? await runServe(rest)
  : await runServe(first === undefined ? [] : [first, ...rest]);
if (code !== undefined) process.exitCode = code;
