// Fixed windows aligned to UTC: a calendar minute, a UTC day, a calendar month. Fixed (not sliding) so every
// replica and the shared store agree on a window by its start alone, with no per-request timestamps kept: a
// window is one counter. The price is the classic boundary burst (up to twice a per-minute limit across the
// turn of a minute), documented in docs/usage-and-limits.md. Pure.
import type { LimitWindow } from '../../model/usage-limits.js';

export interface WindowSpan {
  /** Epoch ms of the window's start: part of the counter's key. */
  readonly start: number;
  /** Epoch ms when the next window starts. */
  readonly end: number;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/** The window of `kind` that holds `now`; `none` (in-flight counts) is one endless window. */
export function windowAt(kind: LimitWindow, now: number): WindowSpan {
  switch (kind) {
    case 'minute': {
      const start = now - (now % MINUTE);
      return { start, end: start + MINUTE };
    }
    case 'day': {
      const start = now - (now % DAY);
      return { start, end: start + DAY };
    }
    case 'month': {
      const d = new Date(now);
      const y = d.getUTCFullYear();
      const m = d.getUTCMonth();
      return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) };
    }
    case 'none':
      return { start: 0, end: Number.POSITIVE_INFINITY };
  }
}

/**
 * OpenAI's format for x-ratelimit-reset-*: "1s", "6m0s", "1h2m3s", "2d4h0m0s" for the time until the window
 * resets (rounded up to the second), or "0s".
 */
export function resetText(ms: number): string {
  let s = Math.max(0, Math.ceil(ms / 1000));
  const d = Math.floor(s / 86_400);
  s -= d * 86_400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d > 0) return `${d}d${h}h${m}m${s}s`;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
