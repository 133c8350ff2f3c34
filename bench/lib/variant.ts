// A gateway variant for A/B runs, from `NAME="WORDS"`: node flags and/or another build's path/to/cli.js, and
// NAME=VALUE environment variables ({upstream} in a value becomes the fake upstream's URL, e.g.
// OTEL_EXPORTER_OTLP_ENDPOINT={upstream}: it answers /v1/traces).
export interface Variant {
  readonly name: string;
  readonly args: string[];
  readonly env: Record<string, string>;
}

export function parseVariant(spec: string, upstreamUrl: string): Variant {
  const eq = spec.indexOf('=');
  const words = spec
    .slice(eq + 1)
    .split(' ')
    .filter(Boolean);
  const isEnv = (w: string) => /^[A-Z_][A-Z0-9_]*=/.test(w);
  const env = Object.fromEntries(
    words.filter(isEnv).map((w) => {
      const i = w.indexOf('=');
      return [w.slice(0, i), w.slice(i + 1).replaceAll('{upstream}', upstreamUrl)];
    }),
  );
  return { name: spec.slice(0, eq), args: words.filter((w) => !isEnv(w)), env };
}
