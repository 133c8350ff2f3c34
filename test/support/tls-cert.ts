// A throwaway self-signed certificate for loopback TLS fakes (an identity provider's token endpoint must be https),
// made with the openssl CLI for the names given; trusted by the test process through tls.setDefaultCACertificates.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';

export interface TestCert {
  readonly key: string;
  readonly cert: string;
}

export function selfSignedCert(names: readonly string[]): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'mg-cert-'));
  try {
    const san = names.map((n) => (/^[\d.]+$/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${names[0]}`,
        '-addext',
        `subjectAltName=${san}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'pipe' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Adds the certificate to the CAs every TLS client of this process trusts by default; returns the undo. */
export function trustCert(cert: string): () => void {
  const before = getCACertificates('default');
  setDefaultCACertificates([...before, cert]);
  return () => setDefaultCACertificates(before);
}
