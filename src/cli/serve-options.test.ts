import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BODY_LIMITS } from '../model/body-limits.js';
import { parseIdKeys } from '../features/sealed-ids/id-keys.js';
import { parseServeArgs, parseSize, renderHelp, renderOptionsMarkdown, SERVE_OPTIONS, type ServeOptions } from './serve-options.js';

function options(argv: string[], env: Record<string, string> = {}): ServeOptions {
  const r = parseServeArgs(argv, env);
  if (r.kind !== 'options') throw new Error(`expected options, got ${JSON.stringify(r)}`);
  return r.options;
}

function error(argv: string[], env: Record<string, string> = {}): string {
  const r = parseServeArgs(argv, env);
  if (r.kind !== 'error') throw new Error(`expected an error, got ${r.kind}`);
  return r.message;
}

describe('serve options', () => {
  it('takes the limits store from MG_REDIS_URL, the lease and usage timings, and refuses what is not a Redis URL or a sane duration', () => {
    expect(options([], { MG_REDIS_URL: 'redis://:pw@redis:6379/0' }).redisUrl).toBe('redis://:pw@redis:6379/0');
    expect(options(['--limits-store-timeout', '200ms', '--limits-fail-closed'])).toMatchObject({ limitsStoreTimeoutMs: 200, limitsFailClosed: true });
    expect(options(['--lease-duration', '4s', '--usage-status-interval', '2s'])).toMatchObject({ leaseDurationMs: 4_000, usageStatusIntervalMs: 2_000 });
    expect(options(['--usage-read-on', '0'])).toMatchObject({ usageReadOnMs: 0 });
    expect(error(['--lease-duration', '1s'])).toBe('--lease-duration must be a duration from 3s to 5m (got "1s")');
    expect(options(['--usage-metrics-per-token'])).toMatchObject({ usageMetricsPerToken: true });
    const bad = parseServeArgs(['--redis-url', 'http://redis:6379'], {});
    expect(bad).toEqual({ kind: 'error', message: '--redis-url must be a redis:// or rediss:// URL such as redis://redis:6379/0' });
    expect(parseServeArgs(['--limits-store-timeout', '1m'], {}).kind).toBe('error');
  });

  it('refuses a Redis URL the client could not use, naming the flag and never echoing the URL (it may hold a password)', () => {
    const cases: [string, RegExp][] = [
      ['redis://:s3cret@redis:notaport', /must be a redis:\/\/ or rediss:\/\/ URL/],
      ['redis://:s3cret@[redis', /must be a redis:\/\/ or rediss:\/\/ URL/],
      ['rediss://user:s3cret%zz@redis', /password that is not valid percent-encoding/],
      ['redis://:s3cret@redis:6379/cache', /path that is not a database number/],
      ['redis:///0', /names no host/],
    ];
    for (const [url, message] of cases) {
      const m = error([], { MG_REDIS_URL: url });
      expect(m, url).toMatch(/^MG_REDIS_URL \(--redis-url\) /);
      expect(m, url).toMatch(message);
      expect(m, url).not.toContain('s3cret');
    }
    for (const url of ['redis://redis:6379', 'rediss://:p%40ss@redis.svc:6380/2', 'redis://[::1]:6379/', 'redis://u:p@h:1/15?family=6']) {
      expect(options(['--redis-url', url]).redisUrl, url).toBe(url);
    }
  });

  it('takes the currency as an ISO 4217 code (default USD) and refuses anything else', () => {
    expect(options([]).currency).toBe('USD');
    expect(options([], { MG_CURRENCY: 'JPY' }).currency).toBe('JPY');
    expect(options(['--currency', 'EUR']).currency).toBe('EUR');
    for (const bad of ['usd', 'US', 'USDT', 'ABC', '$']) expect(error(['--currency', bad]), bad).toMatch(/^--currency must be an ISO 4217 currency code/);
  });

  it('has the agreed flag ↔ environment variable pairs and defaults', () => {
    const pairs = Object.fromEntries(SERVE_OPTIONS.map((o) => [o.flag, o.env]));
    expect(pairs).toEqual({
      config: 'MG_CONFIG_DIR',
      source: 'MG_SOURCE',
      namespaces: 'MG_NAMESPACES',
      'secret-selector': 'MG_SECRET_SELECTOR',
      kubeconfig: 'KUBECONFIG',
      host: 'MG_HOST',
      port: 'MG_PORT',
      'metrics-port': 'MG_METRICS_PORT',
      'log-level': 'MG_LOG_LEVEL',
      'drain-timeout': 'MG_DRAIN_TIMEOUT',
      'max-json-body': 'MG_MAX_JSON_BODY',
      'max-upload-body': 'MG_MAX_UPLOAD_BODY',
      'max-buffered-bytes': 'MG_MAX_BUFFERED_BYTES',
      'leader-election': 'MG_LEADER_ELECTION',
      'lease-name': 'MG_LEASE_NAME',
      'lease-duration': 'MG_LEASE_DURATION',
      'usage-status-interval': 'MG_USAGE_STATUS_INTERVAL',
      'usage-read-on': 'MG_USAGE_READ_ON',
      'id-keys': 'MG_ID_KEYS',
      'id-keys-file': 'MG_ID_KEYS_FILE',
      workers: 'MG_WORKERS',
      'redis-url': 'MG_REDIS_URL',
      'responses-redis-url': 'MG_RESPONSES_REDIS_URL',
      'limits-store-timeout': 'MG_LIMITS_STORE_TIMEOUT',
      'limits-fail-closed': 'MG_LIMITS_FAIL_CLOSED',
      'usage-metrics-per-token': 'MG_USAGE_METRICS_PER_TOKEN',
      'trace-content': 'MG_TRACE_CONTENT',
      currency: 'MG_CURRENCY',
      'allow-unpriced': 'MG_ALLOW_UNPRICED',
    });
    const o = options([]);
    expect(o).toMatchObject({
      source: 'file',
      host: '0.0.0.0',
      port: 8080,
      metricsPort: 9090,
      logLevel: 'info',
      drainTimeoutMs: 25_000,
      secretSelector: 'modelgateway.io/secret=true',
      leaderElection: true,
      leaseName: 'model-gateway',
      leaseDurationMs: 15_000,
      usageReadOnMs: 10_000,
      usageStatusIntervalMs: 30_000,
      workers: 1,
      namespaces: undefined,
      kubeconfig: undefined,
      idKeys: undefined,
      redisUrl: undefined,
      limitsStoreTimeoutMs: 50,
      limitsFailClosed: false,
      usageMetricsPerToken: false,
      traceContent: false,
      allowUnpriced: false,
    });
    expect(o.maxJsonBody).toBe(DEFAULT_BODY_LIMITS.jsonBytes);
    expect(o.maxUploadBody).toBe(DEFAULT_BODY_LIMITS.multipartBytes);
    expect(o.maxBufferedBytes).toBeUndefined(); // derived from the memory limit at start
  });

  it('reads environment variables, and a flag wins over its variable', () => {
    const env = { MG_PORT: '1234', MG_LOG_LEVEL: 'debug', MG_NAMESPACES: 'a, b,a', MG_LEADER_ELECTION: 'false', KUBECONFIG: '/k', POD_NAME: 'pod-1' };
    expect(options([], env)).toMatchObject({
      port: 1234,
      logLevel: 'debug',
      namespaces: ['a', 'b'],
      leaderElection: false,
      kubeconfig: '/k',
      podName: 'pod-1',
    });
    expect(options(['--port', '99', '--log-level=warn', '--leader-election'], env)).toMatchObject({ port: 99, logLevel: 'warn', leaderElection: true });
    expect(options([], { MG_PORT: '' }).port).toBe(8080); // an empty variable counts as unset
  });

  it('parses durations, sizes, booleans and namespace lists', () => {
    expect(options(['--drain-timeout', '1m30s']).drainTimeoutMs).toBe(90_000);
    expect(options(['--drain-timeout', '5']).drainTimeoutMs).toBe(5_000);
    // Fractions as Go's time.ParseDuration takes them, and a bare number of seconds likewise.
    expect(options(['--drain-timeout', '1.5m']).drainTimeoutMs).toBe(90_000);
    expect(options([], { MG_DRAIN_TIMEOUT: '2.5' }).drainTimeoutMs).toBe(2_500);
    expect(options(['--limits-store-timeout', '0.5s']).limitsStoreTimeoutMs).toBe(500);
    expect(options(['--lease-duration', '1m0.5s']).leaseDurationMs).toBe(60_500);
    expect(options(['--max-json-body', '512kb']).maxJsonBody).toBe(512 * 1024);
    expect(parseSize('1.5mb')).toBe(1.5 * 1024 * 1024);
    expect(options([], { MG_MAX_BUFFERED_BYTES: '256mb' }).maxBufferedBytes).toBe(256 * 1024 * 1024);
    expect(options(['--max-buffered-bytes', '1gb']).maxBufferedBytes).toBe(1024 ** 3);
    expect(parseSize('2048')).toBe(2048);
    expect(options(['--no-leader-election']).leaderElection).toBe(false);
    expect(options(['--leader-election=no']).leaderElection).toBe(false);
    expect(options(['--namespaces', '*']).namespaces).toBe('*');
    expect(options(['--source', 'kubernetes', '--secret-selector', 'team in (a,b),!legacy']).secretSelector).toBe('team in (a,b),!legacy');
  });

  it('rejects bad values with one line naming the flag or variable', () => {
    expect(error(['--port', '70000'])).toBe('--port must be an integer from 0 to 65535 (got "70000")');
    expect(error([], { MG_PORT: 'http' })).toBe('MG_PORT (--port) must be an integer from 0 to 65535 (got "http")');
    expect(error(['--source', 'etcd'])).toBe('--source must be one of file, kubernetes (got "etcd")');
    expect(error(['--log-level', 'loud'])).toMatch(/^--log-level must be one of fatal, error/);
    expect(error(['--drain-timeout', '10 minutes'])).toMatch(/^--drain-timeout must be a duration/);
    for (const bad of ['1.5.2s', '1,5s', '1e3', '5 s']) expect(error(['--drain-timeout', bad]), bad).toMatch(/^--drain-timeout must be a duration/);
    expect(error(['--max-upload-body', '12 parsecs'])).toMatch(/^--max-upload-body must be a size/);
    expect(error(['--namespaces', 'Bad_NS'])).toMatch(/^--namespaces must be \* or a comma-separated list/);
    expect(error(['--namespaces', 'a,*'])).toMatch(/^--namespaces must be \* or a comma-separated list/); // "*" is alone or not at all
    expect(options(['--namespaces', ' a, b ,a']).namespaces).toEqual(['a', 'b']);
    expect(error(['--workers', '0'])).toBe('--workers must be an integer from 1 to 64 (got "0")');
    expect(error(['--leader-election=maybe'])).toMatch(/--leader-election/);
    expect(error(['--port', '8080', '--metrics-port', '8080'])).toMatch(/^--metrics-port must differ from --port/);
    expect(error(['--bogus'])).toBe('unknown flag --bogus (see --help)');
    expect(error(['--port'])).toBe('--port needs a value');
    expect(error(['extra'])).toMatch(/^unexpected argument extra/);
    for (const m of [error(['--port', 'x']), error(['--bogus'])]) expect(m).not.toContain('\n');
  });

  it('refuses leader election off with several workers on the Kubernetes source (every worker would write status)', () => {
    const refused = parseServeArgs(['--source', 'kubernetes', '--workers', '2', '--no-leader-election'], {});
    expect(refused).toMatchObject({ kind: 'error', message: expect.stringContaining('--no-leader-election with --workers') });
    expect(parseServeArgs(['--source', 'kubernetes', '--workers', '1', '--no-leader-election'], {}).kind).toBe('options');
    expect(parseServeArgs(['--source', 'kubernetes', '--workers', '2'], {}).kind).toBe('options');
    // The file source writes no status.
    expect(parseServeArgs(['--source', 'file', '--workers', '2', '--no-leader-election'], {}).kind).toBe('options');
  });

  it('decodes id keys from hex or base64 and never echoes a key in an error', () => {
    expect(parseIdKeys(`${'ab'.repeat(32)},${Buffer.alloc(40, 7).toString('base64')}`).map((k) => k.length)).toEqual([32, 40]);
    const secretish = 'c2hvcnQ=';
    expect(() => parseIdKeys(secretish)).toThrow(/^key #1 decodes to 5 bytes; sealed-id keys need at least 32/);
    expect(() => parseIdKeys('ab'.repeat(16))).toThrow(/key #1 decodes to 16 bytes/);
    const message = error(['--id-keys', secretish]);
    expect(message).not.toContain(secretish);
    expect(error(['--id-keys', 'ab'.repeat(32), '--id-keys-file', '/x'])).toMatch(/exclusive/);
  });

  it('--help lists every flag with its environment variable and default', () => {
    const help = renderHelp('1.2.3');
    for (const o of SERVE_OPTIONS) {
      const line = help.split('\n').find((l) => l.startsWith(`  --${o.flag} `) || l.startsWith(`  --[no-]${o.flag} `));
      expect(line, o.flag).toBeDefined();
      expect(line).toContain(`env ${o.env}`);
      expect(line).toContain(`default: ${o.default ?? o.defaultText}`);
    }
    expect(parseServeArgs(['-h'], {}).kind).toBe('help');
    expect(parseServeArgs(['--version'], {}).kind).toBe('version');
  });

  it("the command-line page's flag table is exactly the one rendered from the option table", () => {
    const page = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    expect(page).toContain(renderOptionsMarkdown());
  });
});
