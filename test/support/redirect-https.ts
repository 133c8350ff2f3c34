// Sends the process's undici requests for public hosts to loopback servers instead, TLS and all: the client still
// asks for https://<host>/… and checks the certificate for that name (issued by the test's own CA), so a library
// with a hard-coded endpoint (Google's token URL) is exercised unchanged. Other hosts connect as usual.
import { Agent, buildConnector, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';

/** Redirects each host to 127.0.0.1:<its port>; returns the undo. */
export function redirectHttps(ports: Readonly<Record<string, number>>, ca: string): () => void {
  const before: Dispatcher = getGlobalDispatcher();
  const normal = buildConnector({});
  const redirected = buildConnector({ ca });
  setGlobalDispatcher(
    new Agent({
      connect: (opts, cb) => {
        const port = ports[opts.hostname];
        return port === undefined ? normal(opts, cb) : redirected({ ...opts, hostname: '127.0.0.1', port: String(port), servername: opts.hostname }, cb);
      },
    }),
  );
  return () => setGlobalDispatcher(before);
}
