// Runs Codex CLI (`codex exec`, from the @openai/codex dev dependency) non-interactively against an
// OpenAI-compatible base URL, as a new user would configure it: a model provider speaking the Responses API, its key
// in an environment variable, everything that would reach the network off. CODEX_HOME and the workdir are fresh
// dirs under the caller's `dir`, so no user config, login or session history takes part.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { runAgent, type AgentRun } from './agent-process.js';

// The package's launcher: it finds the native binary of this platform's optional package and forwards signals.
const CODEX = fileURLToPath(import.meta.resolve('@openai/codex/bin/codex.js'));

export interface CodexRun extends AgentRun {
  /** Where Codex worked (and may write: the workspace-write sandbox). */
  readonly workdir: string;
}

export async function runCodex(options: {
  /** An empty dir the caller removes afterwards. */
  dir: string;
  baseURL: string;
  apiKey: string;
  model: string;
  prompt: string;
  timeoutMs?: number;
  /**
   * Leave out the tool a chat completions model cannot be offered (docs/coding-agents.md): the web_search tool the
   * Responses API runs. The multi-agent tools Codex groups in a `namespace` stay.
   */
  chatOnly?: boolean;
}): Promise<CodexRun> {
  const home = join(options.dir, 'codex-home');
  const workdir = join(options.dir, 'work');
  mkdirSync(home);
  mkdirSync(workdir);
  // JSON strings are valid TOML basic strings.
  writeFileSync(
    join(home, 'config.toml'),
    `model = ${JSON.stringify(options.model)}
model_provider = "gateway"
${options.chatOnly ? 'web_search = "disabled"\n' : ''}
[model_providers.gateway]
name = "model-gateway"
base_url = ${JSON.stringify(options.baseURL)}
env_key = "MODEL_GATEWAY_KEY"
wire_api = "responses"

[features]
plugins = false

[analytics]
enabled = false
`,
  );
  const run = await runAgent(CODEX, ['exec', '--skip-git-repo-check', '--sandbox', 'workspace-write', options.prompt], {
    cwd: workdir,
    env: { HOME: home, CODEX_HOME: home, MODEL_GATEWAY_KEY: options.apiKey },
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  return { ...run, workdir };
}

/** How a Codex run ended, with its output: the message of an assertion on it. */
export function runReport(run: CodexRun): string {
  return `codex exited ${run.code} after ${run.ms} ms\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
}
