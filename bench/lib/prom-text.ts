// Reads samples out of a Prometheus text exposition (a target's /metrics), for the benchmarks.

/** Each named series' value, summed over its label sets; a name that is absent is left out. */
export function seriesSums(text: string, names: readonly string[]): Record<string, number> {
  const wanted = new Set(names);
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? ([0-9.e+-]+|NaN)$/.exec(line);
    if (m && wanted.has(m[1]!)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}

/** GETs a /metrics URL and reads the named series (seriesSums). */
export async function scrapeSeries(url: string, names: readonly string[]): Promise<Record<string, number>> {
  return seriesSums(await (await fetch(url)).text(), names);
}
