// A loopback HTTP server for the scripted fakes: it reads each request's JSON body, records the request, and hands
// it to the fake's own answer. The fakes differ only in how they answer.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, any>;
}

export interface RecordingServer {
  /** origin + "/v1", what a ModelRoute backend's baseURL is set to. */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts the server; `answer` gets each request once recorded (requests.length counts it). */
export async function startRecordingServer(
  answer: (req: IncomingMessage, res: ServerResponse, seen: RecordedRequest, requests: readonly RecordedRequest[]) => void,
): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const seen = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
    requests.push(seen);
    answer(req, res, seen, requests);
  });
  const loop = await listenOnLoopback(server);
  return {
    baseURL: `${loop.origin}/v1`,
    requests,
    close: loop.close,
  };
}
