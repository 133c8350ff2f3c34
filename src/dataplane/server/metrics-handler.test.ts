import { describe, expect, it } from 'vitest';
import { acceptsOpenMetrics } from './metrics-handler.js';

describe('acceptsOpenMetrics', () => {
  it("is true for Prometheus's Accept header and a plain OpenMetrics request", () => {
    expect(
      acceptsOpenMetrics(
        'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
      ),
    ).toBe(true);
    expect(acceptsOpenMetrics('application/openmetrics-text')).toBe(true);
  });

  it('is false for classic scrapers, no header, a wildcard, and OpenMetrics refused with q=0', () => {
    expect(acceptsOpenMetrics(undefined)).toBe(false);
    expect(acceptsOpenMetrics('text/plain;version=0.0.4')).toBe(false);
    expect(acceptsOpenMetrics('*/*')).toBe(false);
    expect(acceptsOpenMetrics('application/openmetrics-text;q=0, text/plain')).toBe(false);
  });
});
