import { describe, expect, it } from 'vitest';
import { tracingConfig } from './tracing-config.js';

const ON = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

describe('tracingConfig', () => {
  it('is off unless an OTLP endpoint is set, and when the SDK or the traces exporter is turned off', () => {
    expect(tracingConfig({})).toBeUndefined();
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeUndefined();
    expect(tracingConfig({ ...ON, OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracingConfig({ ...ON, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracingConfig(ON)).toBeDefined();
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBeDefined();
  });

  it('defaults to OTLP/HTTP protobuf and the parent-based always-on sampler, as the specification does', () => {
    expect(tracingConfig(ON)).toMatchObject({ protocol: 'http/protobuf', sampler: 'parentbased_always_on', ratio: 1 });
  });

  it('reads the protocol (the traces-specific variable first), the sampler and its ratio, and the batch settings', () => {
    expect(
      tracingConfig({
        ...ON,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '1000',
        OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      }),
    ).toEqual({
      protocol: 'http/json',
      sampler: 'parentbased_traceidratio',
      ratio: 0.25,
      batch: { scheduledDelayMillis: 1000, exportTimeoutMillis: undefined, maxQueueSize: 4096, maxExportBatchSize: undefined },
      tls: {},
    });
  });

  it('reads the certificate files the variables name (the traces-specific ones first), and stops on one it cannot read', () => {
    const files: Record<string, string> = { '/ca.pem': 'CA', '/traces-ca.pem': 'TRACES CA', '/cert.pem': 'CERT', '/key.pem': 'KEY' };
    const read = (path: string): Buffer => {
      if (!(path in files)) throw Object.assign(new Error(`no ${path}`), { code: 'ENOENT' });
      return Buffer.from(files[path]!);
    };
    const tls = (env: Record<string, string>) => tracingConfig({ ...ON, ...env }, read)?.tls;
    expect(tls({})).toEqual({});
    expect(tls({ OTEL_EXPORTER_OTLP_CERTIFICATE: '/ca.pem' })).toEqual({ ca: Buffer.from('CA') });
    expect(tls({ OTEL_EXPORTER_OTLP_CERTIFICATE: '/ca.pem', OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: '/traces-ca.pem' })).toEqual({
      ca: Buffer.from('TRACES CA'),
    });
    expect(tls({ OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: '/cert.pem', OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: '/key.pem' })).toEqual({
      cert: Buffer.from('CERT'),
      key: Buffer.from('KEY'),
    });
    expect(() => tls({ OTEL_EXPORTER_OTLP_CERTIFICATE: '/missing.pem' })).toThrow('OTEL_EXPORTER_OTLP_CERTIFICATE=/missing.pem cannot be read (ENOENT)');
    expect(() => tls({ OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: '/cert.pem' })).toThrow(/set together or not at all/);
  });

  it('refuses what it cannot honour with a one-line reason', () => {
    expect(() => tracingConfig({ ...ON, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/grpc is not supported; use http\/protobuf or http\/json/);
    expect(() => tracingConfig({ ...ON, OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER=jaeger_remote/);
    expect(() => tracingConfig({ ...ON, OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(/ratio from 0 to 1/);
    expect(() => tracingConfig({ ...ON, OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/zipkin is not supported/);
    expect(() => tracingConfig({ ...ON, OTEL_BSP_SCHEDULE_DELAY: 'soon' })).toThrow(/OTEL_BSP_SCHEDULE_DELAY=soon/);
    expect(() => tracingConfig({ ...ON, OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd' })).toThrow(/COMPRESSION=zstd is not supported; use gzip or none/);
    expect(() => tracingConfig({ ...ON, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '0' })).toThrow(/TRACES_TIMEOUT=0 must be at least 1/);
    // A batch size of 0 would export empty batches in a busy loop until the heap ran out.
    for (const name of ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'OTEL_BSP_MAX_QUEUE_SIZE', 'OTEL_BSP_EXPORT_TIMEOUT']) {
      expect(() => tracingConfig({ ...ON, [name]: '0' })).toThrow(`${name}=0 must be at least 1`);
    }
    expect(tracingConfig({ ...ON, OTEL_BSP_SCHEDULE_DELAY: '0' })?.batch.scheduledDelayMillis).toBe(0);
    expect(() => tracingConfig({ ...ON, OTEL_EXPORTER_OTLP_TIMEOUT: '10s' })).toThrow(/OTEL_EXPORTER_OTLP_TIMEOUT=10s must be a whole number/);
    expect(tracingConfig({ ...ON, OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip', OTEL_EXPORTER_OTLP_TIMEOUT: '500' })).toBeDefined();
  });
});
