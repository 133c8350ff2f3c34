// Runs Claude Code (`claude -p`, from the @anthropic-ai/claude-code dev dependency) non-interactively against an
// Anthropic-compatible base URL: JSON output, non-essential traffic off (so it calls nothing but the base URL),
// permissions skipped (as root it then also wants IS_SANDBOX=1), a fresh HOME and workdir under the caller's dir.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAgent, type AgentRun } from './agent-process.js';

// The package's postinstall puts this platform's native binary here.
const CLAUDE = fileURLToPath(import.meta.resolve('@anthropic-ai/claude-code/bin/claude.exe'));

export interface ClaudeCodeRun extends AgentRun {
  /** The parsed `--output-format json` result (`result`, `usage`, `is_error`, …); undefined if stdout was not JSON. */
  readonly output: Record<string, any> | undefined;
  /** With `streamJson`, every message Claude Code printed (one JSON object a line), in order; else empty. */
  readonly messages: Record<string, any>[];
  /** Where Claude Code worked. */
  readonly workdir: string;
}

export interface ClaudeCodeOptions {
  /** An empty dir the caller removes afterwards; HOME and the workdir are made in it. */
  dir: string;
  /** ANTHROPIC_BASE_URL: an origin, without /v1 (Claude Code appends /v1/messages). */
  baseURL: string;
  key: string;
  /** How the key is sent: x-api-key (ANTHROPIC_API_KEY, the default) or Authorization: Bearer (ANTHROPIC_AUTH_TOKEN). */
  auth?: 'x-api-key' | 'bearer';
  /** --model; Claude Code's own default when absent. */
  model?: string;
  prompt: string;
  timeoutMs?: number;
  /** `--output-format stream-json --verbose`: a message a line; `output` is then the final `result` message. */
  streamJson?: boolean;
}

/** The workdir runClaudeCode uses for `dir`, known before the run (a scripted Write needs an absolute path). */
export const claudeWorkdir = (dir: string) => join(dir, 'work');

export async function runClaudeCode(options: ClaudeCodeOptions): Promise<ClaudeCodeRun> {
  const home = join(options.dir, 'home');
  const workdir = claudeWorkdir(options.dir);
  mkdirSync(home);
  mkdirSync(workdir);
  const args = [
    '-p',
    options.prompt,
    '--dangerously-skip-permissions',
    ...(options.streamJson ? ['--output-format', 'stream-json', '--verbose'] : ['--output-format', 'json']),
  ];
  if (options.model) args.push('--model', options.model);
  const run = await runAgent(CLAUDE, args, {
    cwd: workdir,
    env: {
      HOME: home,
      ANTHROPIC_BASE_URL: options.baseURL,
      [options.auth === 'bearer' ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_API_KEY']: options.key,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      IS_SANDBOX: '1',
    },
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  const parse = (text: string) => {
    try {
      return JSON.parse(text) as Record<string, any>;
    } catch {
      return undefined;
    }
  };
  if (!options.streamJson) return { ...run, output: parse(run.stdout), messages: [], workdir };
  const messages = run.stdout
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => parse(line) ?? { unparsed: line });
  return { ...run, output: messages.findLast((m) => m['type'] === 'result'), messages, workdir };
}
