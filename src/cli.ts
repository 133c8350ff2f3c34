#!/usr/bin/env node
// The model-gateway executable: `serve` (default) and `check`. Dispatch only; each subcommand lives in src/cli/.
import { runCheck } from './cli/check.js';
import { runServe } from './cli/serve.js';

const [first, ...rest] = process.argv.slice(2);
const code =
  first === 'check' ? await runCheck(rest)
  : first === 'serve' ? await runServe(rest)
  : await runServe(first === undefined ? [] : [first, ...rest]);
if (code !== undefined) process.exitCode = code;
