// Sends the process's undici requests for one public host to a loopback server instead, TLS and all: the client
// still asks for https://<host>/… and checks the certificate for that name (issued by the test's own CA), so a
// library with a hard-coded endpoint (Google's token URL) is exercised unchanged. Other hosts connect as usual.
import { Agent, buildConnector, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';

/** Redirects `host` to 127.0.0.1:`port`; returns the undo. */
export function redirectHttps(host: string, port: number, ca: string): () => void {
  const before: Dispatcher = getGlobalDispatcher();
  const normal = buildConnector({});
  const redirected = buildConnector({ ca });
  setGlobalDispatcher(
    new Agent({
      connect: (opts, cb) =>
        opts.hostname === host ? redirected({ ...opts, hostname: '127.0.0.1', port: String(port), servername: host }, cb) : normal(opts, cb),
    }),
  );
  return () => setGlobalDispatcher(before);
}
