// A self-signed certificate for 127.0.0.1 (EC P-256, one day), written by openssl, for the fake API server's TLS.
import { execFileSync } from 'node:child_process';

export function writeLoopbackCert(keyPath: string, certPath: string): void {
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'];
  args.push('-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyPath, '-out', certPath);
  execFileSync('openssl', args, { stdio: 'ignore' });
}
