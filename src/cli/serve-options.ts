// The one table of `serve` flags: name, environment variable, default, meaning and how a value is checked.
// --help and the table in docs/cli.md are both rendered from it, so they cannot drift (a test compares the page).
// Pure: argv and env in, typed options or a one-line error out; no I/O.
import { parseArgs } from 'node:util';
import { DEFAULT_BODY_LIMITS } from '../model/body-limits.js';
import { isCurrency } from '../model/money.js';
import { parseIdKeys } from '../features/sealed-ids/id-keys.js';
import {
  formatSize,
  nonEmpty,
  oneOf,
  parseBoolean,
  parseDnsName,
  parseDrain,
  parseInteger,
  parseNamespaces,
  parsePort,
  parseRedisUrl,
  parseSelector,
  parseSize,
} from './option-values.js';

export { parseSize } from './option-values.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export interface ServeOptions {
  readonly source: 'file' | 'kubernetes';
  readonly configDir: string;
  /** Namespaces to watch: a list, '*' for all, or undefined for the pod's own namespace. */
  readonly namespaces: readonly string[] | '*' | undefined;
  readonly secretSelector: string;
  readonly kubeconfig: string | undefined;
  readonly host: string;
  readonly port: number;
  readonly metricsPort: number;
  readonly logLevel: LogLevel;
  readonly drainTimeoutMs: number;
  readonly maxJsonBody: number;
  readonly maxUploadBody: number;
  /** Budget of buffered request bodies across requests; undefined derives it from the memory limit. */
  readonly maxBufferedBytes: number | undefined;
  readonly leaderElection: boolean;
  readonly leaseName: string;
  /** How long a Lease holds without renewal before a standby takes over (renew deadline and retry period follow). */
  readonly leaseDurationMs: number;
  /** Between two rounds of status.usage writes. */
  readonly usageStatusIntervalMs: number;
  readonly usageReadOnMs: number;
  /** Leader-election identity (POD_NAME; no flag). */
  readonly podName: string | undefined;
  /** HMAC keys for sealed ids, as given (base64 or hex, comma-separated; first signs). Checked here, decoded by parseIdKeys (routing/id-keys). */
  readonly idKeys: string | undefined;
  readonly idKeysFile: string | undefined;
  readonly workers: number;
  /** Shared store of limit counters; undefined: counters live in each process. Holds a password maybe: never logged. */
  readonly redisUrl: string | undefined;
  readonly responsesRedisUrl: string | undefined;
  readonly limitsStoreTimeoutMs: number;
  readonly limitsFailClosed: boolean;
  readonly usageMetricsPerToken: boolean;
  /** ISO 4217 code of the one currency every price and money limit is written in. */
  readonly currency: string;
  /** Under a money limit, serve requests whose cost is unknown, counted at what can be priced. */
  readonly allowUnpriced: boolean;
  /** Record prompts and completions on trace spans (tracing itself is configured by OTEL_* variables). */
  readonly traceContent: boolean;
}

interface OptionSpec<K extends keyof ServeOptions = keyof ServeOptions> {
  readonly flag: string;
  readonly env: string;
  /** Placeholder in --help (absent for booleans). */
  readonly value?: string;
  /** The default as a user would type it; undefined when there is none (or it is computed, see defaultText). */
  readonly default?: string;
  /** How the default is described when it is not a literal value. */
  readonly defaultText?: string;
  readonly description: string;
  readonly key: K;
  readonly boolean?: boolean;
  /** Converts the text given (flag, env or default) or throws a message naming no flag. */
  readonly parse: (text: string) => ServeOptions[K];
}

const spec = <K extends keyof ServeOptions>(s: OptionSpec<K>): OptionSpec => s as unknown as OptionSpec;

export const SERVE_OPTIONS: readonly OptionSpec[] = [
  spec({
    flag: 'config',
    env: 'MG_CONFIG_DIR',
    value: 'DIR',
    default: '/etc/model-gateway/config',
    key: 'configDir',
    description: 'Directory of manifests (ModelRoute, Group, GatewayToken, Secret; nested folders, multi-document YAML), hot-reloaded. Used by --source file.',
    parse: nonEmpty,
  }),
  spec({
    flag: 'source',
    env: 'MG_SOURCE',
    value: 'file|kubernetes',
    default: 'file',
    key: 'source',
    description: 'Where config comes from: the --config directory, or the Kubernetes API.',
    parse: (t) => oneOf(t, ['file', 'kubernetes'] as const),
  }),
  spec({
    flag: 'namespaces',
    env: 'MG_NAMESPACES',
    value: 'a,b|*',
    defaultText: 'pod namespace',
    key: 'namespaces',
    description:
      'Namespaces to watch with --source kubernetes: a comma-separated list or * for all. Default: POD_NAMESPACE, else the service-account namespace.',
    parse: parseNamespaces,
  }),
  spec({
    flag: 'secret-selector',
    env: 'MG_SECRET_SELECTOR',
    value: 'SELECTOR',
    default: 'modelgateway.io/secret=true',
    key: 'secretSelector',
    description: 'Label selector of the Secrets the gateway reads with --source kubernetes.',
    parse: parseSelector,
  }),
  spec({
    flag: 'kubeconfig',
    env: 'KUBECONFIG',
    value: 'FILE',
    defaultText: 'in-cluster',
    key: 'kubeconfig',
    description: 'Kubeconfig file for --source kubernetes outside a cluster.',
    parse: nonEmpty,
  }),
  spec({
    flag: 'host',
    env: 'MG_HOST',
    value: 'ADDR',
    default: '0.0.0.0',
    key: 'host',
    description: 'Address the API and metrics servers listen on.',
    parse: nonEmpty,
  }),
  spec({
    flag: 'port',
    env: 'MG_PORT',
    value: 'PORT',
    default: '8080',
    key: 'port',
    description: 'API port (/v1/*, /healthz, /readyz). 0 picks a free port.',
    parse: parsePort,
  }),
  spec({
    flag: 'metrics-port',
    env: 'MG_METRICS_PORT',
    value: 'PORT',
    default: '9090',
    key: 'metricsPort',
    description: 'Prometheus /metrics port, separate from the API. 0 picks a free port.',
    parse: parsePort,
  }),
  spec({
    flag: 'log-level',
    env: 'MG_LOG_LEVEL',
    value: 'LEVEL',
    default: 'info',
    key: 'logLevel',
    description: `JSON log level: ${LOG_LEVELS.join(', ')}.`,
    parse: (t) => oneOf(t, LOG_LEVELS),
  }),
  spec({
    flag: 'drain-timeout',
    env: 'MG_DRAIN_TIMEOUT',
    value: 'DURATION',
    default: '25s',
    key: 'drainTimeoutMs',
    description:
      'On SIGTERM/SIGINT, how long in-flight requests (streams included) may finish; then a stream ends with an error event and a request still waiting for its upstream gets 503.',
    parse: parseDrain,
  }),
  spec({
    flag: 'max-json-body',
    env: 'MG_MAX_JSON_BODY',
    value: 'SIZE',
    default: formatSize(DEFAULT_BODY_LIMITS.jsonBytes),
    key: 'maxJsonBody',
    description: 'Largest JSON request body (e.g. 512kb, 20mb); larger bodies get 413.',
    parse: parseSize,
  }),
  spec({
    flag: 'max-upload-body',
    env: 'MG_MAX_UPLOAD_BODY',
    value: 'SIZE',
    default: formatSize(DEFAULT_BODY_LIMITS.multipartBytes),
    key: 'maxUploadBody',
    description: 'Largest multipart upload (audio, image edits, video references); larger bodies get 413.',
    parse: parseSize,
  }),
  spec({
    flag: 'max-buffered-bytes',
    env: 'MG_MAX_BUFFERED_BYTES',
    value: 'SIZE',
    key: 'maxBufferedBytes',
    defaultText: 'memory limit / 4, 32mb to 512mb',
    description:
      'Most request-body bytes held in memory at once, all requests together (per worker); a body that does not fit gets 503 with retry-after. Default: a quarter of the container memory limit (divided among --workers).',
    parse: parseSize,
  }),
  spec({
    flag: 'leader-election',
    env: 'MG_LEADER_ELECTION',
    default: 'true',
    key: 'leaderElection',
    boolean: true,
    description: 'With --source kubernetes, only the replica holding the Lease writes status (--no-leader-election: every replica does).',
    parse: parseBoolean,
  }),
  spec({
    flag: 'lease-name',
    env: 'MG_LEASE_NAME',
    value: 'NAME',
    default: 'model-gateway',
    key: 'leaseName',
    description: 'Name of the coordination.k8s.io Lease used for leader election (identity: POD_NAME).',
    parse: parseDnsName,
  }),
  spec({
    flag: 'lease-duration',
    env: 'MG_LEASE_DURATION',
    value: 'DURATION',
    default: '15s',
    key: 'leaseDurationMs',
    description:
      "How long a standby waits for a silent leader's Lease before taking over (a crashed leader's status writes resume after about this long); the leader renews every 2/15 of it and stops writing after 2/3 of it without renewal, as client-go's 15s/10s/2s.",
    parse: (t) => parseDurationBetween(t, 3_000, 300_000, '3s to 5m'),
  }),
  spec({
    flag: 'usage-status-interval',
    env: 'MG_USAGE_STATUS_INTERVAL',
    value: 'DURATION',
    default: '30s',
    key: 'usageStatusIntervalMs',
    description: "How often the leader writes the limits' counts into status.usage of Groups and GatewayTokens (only objects whose counts changed).",
    parse: (t) => parseDurationBetween(t, 1_000, 3_600_000, '1s to 1h'),
  }),
  spec({
    flag: 'usage-read-on',
    env: 'MG_USAGE_READ_ON',
    value: 'DURATION',
    default: '10s',
    key: 'usageReadOnMs',
    description:
      'How long a stream whose client left is still read (at most 1 MiB) for the usage its end reports, so its cost is exact; 0: the upstream request is cut at once and the usage estimated.',
    parse: (t) => parseDurationBetween(t, 0, 120_000, '0 to 2m'),
  }),
  spec({
    flag: 'id-keys',
    env: 'MG_ID_KEYS',
    value: 'K1,K2',
    key: 'idKeys',
    defaultText: 'none',
    description:
      'HMAC keys (base64 or hex, at least 32 bytes each) sealing video and response ids; the first signs, all verify. Prefer --id-keys-file. None: a random key per start (ids do not survive a restart).',
    parse: (t) => {
      parseIdKeys(t); // checked here (a bad key stops serve with one line); decoded later
      return t;
    },
  }),
  spec({
    flag: 'id-keys-file',
    env: 'MG_ID_KEYS_FILE',
    value: 'FILE',
    key: 'idKeysFile',
    defaultText: 'none',
    description: 'File holding the id keys (comma- or newline-separated), e.g. a mounted Secret.',
    parse: nonEmpty,
  }),
  spec({
    flag: 'trace-content',
    env: 'MG_TRACE_CONTENT',
    default: 'false',
    key: 'traceContent',
    boolean: true,
    description:
      'With tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set; see docs/operations.md), also record prompts and completions on the spans (gen_ai.input.messages, gen_ai.system_instructions, gen_ai.output.messages; 16 KiB each; chat completions, Responses and the Messages API). Off: content is never recorded.',
    parse: parseBoolean,
  }),
  spec({
    flag: 'workers',
    env: 'MG_WORKERS',
    value: 'N',
    default: '1',
    key: 'workers',
    description: 'Worker processes sharing the API port (one event loop each).',
    parse: (t) => parseInteger(t, 1, 64),
  }),
  spec({
    flag: 'redis-url',
    env: 'MG_REDIS_URL',
    value: 'URL',
    defaultText: 'none (in-process counters)',
    key: 'redisUrl',
    description:
      'Redis (redis:// or rediss://, a single primary) holding the counters of Group, GatewayToken and backend limits, shared by every replica. Without it each process counts alone: N replicas admit up to N times each limit.',
    parse: parseRedisUrl,
  }),
  spec({
    flag: 'responses-redis-url',
    env: 'MG_RESPONSES_REDIS_URL',
    value: 'URL',
    defaultText: 'none (in-process)',
    key: 'responsesRedisUrl',
    description:
      'Redis (redis:// or rediss://) keeping, for an hour, the Responses requests and answers translated for chat completions and Claude backends, so that every replica can continue one (previous_response_id) or resolve an item_reference to its items. Without it each process keeps its own (64 MB, least recently used first). Holds conversation text: size it for an hour of them; an eviction policy is fine (a response lost is a continuation refused).',
    parse: parseRedisUrl,
  }),
  spec({
    flag: 'limits-store-timeout',
    env: 'MG_LIMITS_STORE_TIMEOUT',
    value: 'DURATION',
    default: '50ms',
    key: 'limitsStoreTimeoutMs',
    description:
      'Deadline of every call to the limits store (Redis): no request waits longer for it (before the store first answered at start, up to 2 s). A call past it fails open (the request passes uncounted) unless --limits-fail-closed.',
    parse: (t) => parseDurationBetween(t, 1, 10_000, '1ms to 10s'),
  }),
  spec({
    flag: 'limits-fail-closed',
    env: 'MG_LIMITS_FAIL_CLOSED',
    default: 'false',
    key: 'limitsFailClosed',
    boolean: true,
    description: 'While the limits store fails, refuse requests that need it with 503 instead of letting them through uncounted.',
    parse: parseBoolean,
  }),
  spec({
    flag: 'usage-metrics-per-token',
    env: 'MG_USAGE_METRICS_PER_TOKEN',
    default: 'false',
    key: 'usageMetricsPerToken',
    boolean: true,
    description:
      'Also count tokens per GatewayToken (model_gateway_token_tokens_total, labelled with its namespace/name): one series per token, model and type, so off by default.',
    parse: parseBoolean,
  }),
  spec({
    flag: 'currency',
    env: 'MG_CURRENCY',
    value: 'CODE',
    default: 'USD',
    key: 'currency',
    description:
      'ISO 4217 code (USD, EUR, JPY, …) of the one currency that every pricing field of a backend and every costPerDay and costPerMonth limit is written in. The gateway converts nothing.',
    parse: (t) => {
      if (!isCurrency(t)) throw new Error(`must be an ISO 4217 currency code in capitals, such as USD or EUR (got "${t}")`);
      return t;
    },
  }),
  spec({
    flag: 'allow-unpriced',
    env: 'MG_ALLOW_UNPRICED',
    default: 'false',
    key: 'allowUnpriced',
    boolean: true,
    description:
      'Under a costPerDay or costPerMonth limit, send requests to backends without the prices they need and count only what can be priced (logged once per backend), instead of refusing them with 403 model_not_priced.',
    parse: parseBoolean,
  }),
];

export type ParseOutcome =
  | { readonly kind: 'options'; readonly options: ServeOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'error'; readonly message: string };

/** argv (after the subcommand) and the environment → options; a flag wins over its variable. */
export function parseServeArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParseOutcome {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: normalizeBooleans(argv),
      strict: true,
      allowPositionals: false,
      allowNegative: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        ...Object.fromEntries(SERVE_OPTIONS.map((o) => [o.flag, { type: o.boolean ? ('boolean' as const) : ('string' as const) }])),
      },
    }));
  } catch (err) {
    return { kind: 'error', message: argsError(err as Error & { code?: string }) };
  }
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const out: Record<string, unknown> = { podName: blankToUndefined(env.POD_NAME) };
  for (const o of SERVE_OPTIONS) {
    const given = values[o.flag];
    const fromEnv = blankToUndefined(env[o.env]);
    const [text, origin] =
      given !== undefined
        ? [String(given), `--${o.flag}`]
        : fromEnv !== undefined
          ? [fromEnv, `${o.env} (--${o.flag})`]
          : [o.default, `default of --${o.flag}`];
    if (text === undefined) {
      out[o.key] = undefined;
      continue;
    }
    try {
      out[o.key] = o.parse(text);
    } catch (err) {
      return { kind: 'error', message: `${origin} ${(err as Error).message}` };
    }
  }
  const options = out as unknown as ServeOptions;
  if (options.port !== 0 && options.port === options.metricsPort) {
    return { kind: 'error', message: '--metrics-port must differ from --port (metrics are served on their own port)' };
  }
  if (options.idKeys !== undefined && options.idKeysFile !== undefined) {
    return { kind: 'error', message: '--id-keys and --id-keys-file are exclusive; give one' };
  }
  // Without the Lease every worker process writes every status and they conflict with each other, as several
  // replicas would (the chart's values schema refuses the same combination).
  if (options.source === 'kubernetes' && options.workers > 1 && !options.leaderElection) {
    return {
      kind: 'error',
      message: '--no-leader-election with --workers above 1 makes every worker write every status; keep leader election on, or run one worker',
    };
  }
  return { kind: 'options', options };
}

function parseDurationBetween(t: string, min: number, max: number, range: string): number {
  const ms = parseDrain(t);
  if (ms < min || ms > max) throw new Error(`must be a duration from ${range} (got "${t}")`);
  return ms;
}

/** `--help` text: every flag with its environment variable, default and meaning. */
export function renderHelp(version: string): string {
  const lines = [
    `model-gateway ${version}: an OpenAI-compatible model gateway`,
    '',
    'Usage:',
    '  model-gateway [serve] [flags]     run the gateway (the default command)',
    '  model-gateway check PATH... [flags]   validate manifests offline (model-gateway check --help)',
    '',
    'Every flag can also be set by the environment variable shown; a flag wins over its variable.',
    '',
    'Flags:',
  ];
  for (const o of SERVE_OPTIONS) {
    lines.push(`  ${flagLabel(o).padEnd(34)} env ${o.env.padEnd(20)} default: ${defaultLabel(o)}`);
    lines.push(`      ${o.description}`);
  }
  lines.push(`  ${'-h, --help'.padEnd(34)} show this help`);
  lines.push(`  ${'-v, --version'.padEnd(34)} print the version`);
  return `${lines.join('\n')}\n`;
}

/** The flag table of docs/cli.md (Markdown), rendered from the same table as --help. */
export function renderOptionsMarkdown(): string {
  const rows = SERVE_OPTIONS.map((o) => {
    const cell = (t: string) => t.replaceAll('|', '\\|'); // GitHub tables split on | even inside code spans
    return `| \`${cell(flagLabel(o))}\` | \`${o.env}\` | ${defaultLabel(o, '`')} | ${cell(o.description)} |`;
  });
  return `${['| Flag | Environment variable | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n')}\n`;
}

function flagLabel(o: OptionSpec): string {
  return o.boolean ? `--[no-]${o.flag}` : `--${o.flag} ${o.value}`;
}

function defaultLabel(o: OptionSpec, quote = ''): string {
  return o.default !== undefined ? `${quote}${o.default}${quote}` : (o.defaultText ?? 'none');
}

function blankToUndefined(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

/** parseArgs takes `--flag` / `--no-flag` for booleans; also accept `--flag=false` as people write in manifests. */
function normalizeBooleans(argv: readonly string[]): string[] {
  const booleans = new Set(SERVE_OPTIONS.filter((o) => o.boolean).map((o) => o.flag));
  return argv.map((a) => {
    const m = /^--([a-z-]+)=(.*)$/.exec(a);
    if (!m || !booleans.has(m[1]!)) return a;
    try {
      return parseBoolean(m[2]!) ? `--${m[1]}` : `--no-${m[1]}`;
    } catch {
      return a; // parseArgs then reports it
    }
  });
}

function argsError(err: Error & { code?: string }): string {
  const flag = /'(-[^' ]+)/.exec(err.message)?.[1];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown flag ${flag ?? ''} (see --help)`.replace('  ', ' ');
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /does not take an argument/.test(err.message)
        ? `${flag} takes no value here; use ${flag} or --no-${flag?.replace(/^--/, '')}`
        : `${flag ?? 'a flag'} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument ${/'([^']+)'/.exec(err.message)?.[1] ?? ''} (flags only; see --help)`;
    default:
      return err.message.split('\n')[0]!;
  }
}
