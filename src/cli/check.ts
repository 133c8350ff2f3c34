// `model-gateway check PATH...`: reads manifests with the gateway's own reader, runs the gateway's own compile,
// prints every object's conditions. Only I/O and wiring here; flags, report and rendering are pure modules.
import { relative } from 'node:path';
import { compile } from '../compile/compile.js';
import { listManifestFiles, readManifestFile, readManifestText } from '../sources/file/manifest-files.js';
import type { ParsedManifests } from '../compile/manifests.js';
import type { SourcedObject } from '../compile/resources.js';
import { CHECK_HELP, parseCheckArgs, STDIN_PATH } from './check-options.js';
import { renderJson, renderTable } from './check-render.js';
import { buildReport, type CheckInputError } from './check-report.js';

/** How standard input is named in messages and in the JSON output's `file`. */
const STDIN_NAME = '<stdin>';

/** Where the check writes its output and reads "-" from: the process's streams, or a test's strings. */
export interface CheckIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<string>;
}

const PROCESS_IO: CheckIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  readStdin,
};

export async function runCheck(args: string[], io: CheckIo = PROCESS_IO): Promise<number> {
  const parsed = parseCheckArgs(args);
  if (parsed.kind === 'usage') {
    io.stderr(`model-gateway check: ${parsed.message}\nRun 'model-gateway check --help' for usage.\n`);
    return 2;
  }
  if (parsed.kind === 'help') {
    io.stdout(CHECK_HELP);
    return 0;
  }
  const { options } = parsed;
  const input = await readInputs(options.paths, io.readStdin);
  // The current time, so a token past its expiresAt shows as Expired: the gateway would refuse it now.
  const { statuses } = compile(input.objects, { assumeSecretsPresent: options.assumeSecrets, now: Date.now() });
  // Secrets are judged only when invalid (then they have a status); the others are neither judged nor ignored.
  const secrets =
    input.objects.filter((o) => o.object.kind === 'Secret' && o.object.apiVersion === 'v1').length - statuses.filter((s) => s.kind === 'Secret').length;
  const report = buildReport({
    statuses,
    errors: input.errors,
    files: input.files,
    ignored: input.objects.length - secrets - statuses.length,
    allowWarnings: options.allowWarnings,
  });
  io.stdout(options.output === 'json' ? renderJson(report) : renderTable(report));
  return report.ok ? 0 : 1;
}

interface Inputs {
  objects: SourcedObject[];
  errors: CheckInputError[];
  /** Display names of the files read, in order (stdin where "-" was given). */
  files: string[];
}

/** Every path in order; a path that cannot be read is an error of the check, not a crash. */
async function readInputs(paths: readonly string[], stdin: () => Promise<string>): Promise<Inputs> {
  const out: Inputs = { objects: [], errors: [], files: [] };
  const add = (parsed: ParsedManifests) => {
    out.objects.push(...parsed.objects);
    out.errors.push(...parsed.errors);
  };
  for (const path of paths) {
    if (path === STDIN_PATH) {
      out.files.push(STDIN_NAME);
      add(readManifestText(await stdin(), STDIN_NAME));
      continue;
    }
    let files: string[];
    try {
      files = await listManifestFiles([path]);
    } catch (err) {
      out.errors.push({ file: path, line: null, message: describeFsError(err) });
      continue;
    }
    // A file already read through an earlier path is not read again (it would conflict with itself).
    const fresh = files.filter((f) => !out.files.includes(displayName(f)));
    out.files.push(...fresh.map(displayName));
    // Read one by one: readManifestFiles would list (stat) these already-listed files a second time.
    for (const file of fresh) add(await readManifestFile(file, displayName));
  }
  return out;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Files are named relative to the working directory, as a CI log reader wants to find them. */
function displayName(file: string): string {
  return relative(process.cwd(), file) || file;
}

function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'no such file or directory';
  if (e.code === 'EACCES') return 'permission denied';
  return e.message;
}
