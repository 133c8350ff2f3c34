// Flags of `model-gateway check` → options, or a one-line usage error. Pure: no I/O.
import { parseArgs } from 'node:util';

type OutputFormat = 'table' | 'json';

interface CheckOptions {
  /** Files, directories, or "-" for standard input, in the order given. */
  readonly paths: readonly string[];
  readonly output: OutputFormat;
  /** Warnings (a pattern matching no model, …) do not fail the check. */
  readonly allowWarnings: boolean;
  /** References to Secrets that are not in the input count as present (GitOps repos keep Secrets elsewhere). */
  readonly assumeSecrets: boolean;
}

export type CheckArgs =
  | { readonly kind: 'run'; readonly options: CheckOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage'; readonly message: string };

export const STDIN_PATH = '-';

export const CHECK_HELP = `Usage: model-gateway check [flags] PATH...

Checks ModelRoute, Group and GatewayToken manifests offline, with the same schemas and the same compile as the
gateway, and prints every object with its conditions (Accepted, ResolvedRefs, Ready).

PATH is a file, a directory (read recursively: *.yaml, *.yml, *.json; dot-entries skipped) or - for standard
input. Secrets in the input resolve references; objects of other kinds are ignored.

Flags:
  -o, --output table|json  output format (default: table)
      --assume-secrets     treat references to Secrets that are not in the input as present
                           (for GitOps repositories that keep Secrets elsewhere)
      --allow-warnings     do not fail on warnings (a group or token model pattern that matches no model)
  -h, --help               show this help

Exit status:
  0  every object is Ready, every file parsed, and there are no warnings (or --allow-warnings)
  1  an object is not Ready, a file could not be read or parsed, or there is a warning
  2  usage error
`;

const PARSE_CONFIG = {
  allowPositionals: true,
  strict: true,
  options: {
    output: { type: 'string', short: 'o' },
    'allow-warnings': { type: 'boolean' },
    'assume-secrets': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
} as const;

export function parseCheckArgs(args: readonly string[]): CheckArgs {
  let parsed: ReturnType<typeof parseArgs<typeof PARSE_CONFIG>>;
  try {
    parsed = parseArgs({ ...PARSE_CONFIG, args: [...args] });
  } catch (err) {
    // node:util explains at length how to pass a positional starting with "-"; the first sentence is the point.
    return usage((err as Error).message.split(/\.\s/)[0]!.replace(/\.$/, ''));
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') return usage(`--output must be table or json, not "${output}"`);
  if (positionals.length === 0) return usage('no PATH given (a file, a directory, or - for standard input)');
  if (positionals.filter((p) => p === STDIN_PATH).length > 1) return usage('standard input (-) can be read only once');
  return {
    kind: 'run',
    options: {
      paths: positionals,
      output,
      allowWarnings: values['allow-warnings'] ?? false,
      assumeSecrets: values['assume-secrets'] ?? false,
    },
  };
}

function usage(message: string): CheckArgs {
  return { kind: 'usage', message };
}
