// Go-style durations ("1m30s", "500ms", "1.5m") to milliseconds; the caller has already checked the shape (the
// resources' schema admits whole numbers only; the CLI's flags take fractions, as Go does).
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

export function parseDuration(text: string): number {
  let total = 0;
  for (const m of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!;
  return total;
}
