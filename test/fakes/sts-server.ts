// A fake AWS STS answering AssumeRoleWithWebIdentity, the call the AWS SDK's chain makes for IRSA (EKS IAM roles for
// service accounts): TLS on loopback, reached as sts.<region>.amazonaws.com only through an egress proxy
// (test/fakes/egress-proxy.ts), its certificate naming that host. What it checks, as STS does: the query-protocol
// form POST (Action, Version 2011-06-15, RoleArn, RoleSessionName, WebIdentityToken), the token file's content for a
// role it knows, no request signature (the call is anonymous). It answers with the API reference's XML shape, and
// `credentials(accessKeyId)` hands the issued temporary keys to the independent SigV4 verifier of the fake Bedrock.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { SigV4Credentials } from './sigv4-verifier.js';
import type { TestCert } from '../support/tls-cert.js';
import { listenOnLoopback } from './loopback.js';

const XMLNS = 'https://sts.amazonaws.com/doc/2011-06-15/';

interface IssuedStsCredentials extends Required<SigV4Credentials> {
  /** Epoch milliseconds: refused by credentials() from then on. */
  readonly expiresAt: number;
  /** The host the client asked for (Host header, through the tunnel). */
  readonly host: string;
  readonly roleArn: string;
  readonly sessionName: string;
}

export interface FakeSts {
  readonly port: number;
  readonly issued: IssuedStsCredentials[];
  /** Why each refused request was refused (STS error code and message). */
  readonly refusals: string[];
  /** The temporary keys issued under this id, while they are valid. */
  credentials(accessKeyId: string): SigV4Credentials | undefined;
  close(): Promise<void>;
}

/** `roles`: role ARN → the web identity token (the projected service-account token) STS accepts for it. */
export async function startFakeSts(o: { tls: TestCert; roles: Readonly<Record<string, string>>; lifetimeSeconds?: number }): Promise<FakeSts> {
  const issued: IssuedStsCredentials[] = [];
  const refusals: string[] = [];
  const lifetime = o.lifetimeSeconds ?? 3600;

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const requestId = crypto.randomUUID();
    const refuse = (status: number, code: string, message: string) => {
      refusals.push(`${code}: ${message}`);
      res.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId });
      res.end(
        `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
      );
    };
    if (req.method !== 'POST' || (req.url ?? '/') !== '/') return refuse(404, 'UnknownOperationException', `${req.method} ${req.url}`);
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return refuse(400, 'InvalidParameterValue', `content-type ${req.headers['content-type']}`);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    if (form.get('Action') !== 'AssumeRoleWithWebIdentity') return refuse(400, 'InvalidAction', `Could not find operation ${form.get('Action')}`);
    if (form.get('Version') !== '2011-06-15') return refuse(400, 'InvalidParameterValue', `Version ${form.get('Version')}`);
    if (req.headers.authorization !== undefined) return refuse(400, 'InvalidParameterValue', 'AssumeRoleWithWebIdentity is not signed');
    const roleArn = form.get('RoleArn') ?? '';
    const sessionName = form.get('RoleSessionName') ?? '';
    if (!/^[\w+=,.@-]{2,64}$/.test(sessionName)) return refuse(400, 'ValidationError', `RoleSessionName ${sessionName}`);
    const expected = o.roles[roleArn];
    if (expected === undefined) return refuse(403, 'AccessDenied', `Not authorized to perform sts:AssumeRoleWithWebIdentity on ${roleArn}`);
    if (form.get('WebIdentityToken') !== expected) return refuse(400, 'InvalidIdentityToken', 'Couldn’t retrieve verification key from your identity provider');

    const expiresAt = Date.now() + lifetime * 1000;
    const creds: IssuedStsCredentials = {
      accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: `IQoJb3JpZ2luX2VjE${randomBytes(48).toString('base64url')}`,
      expiresAt,
      host: req.headers.host ?? '',
      roleArn,
      sessionName,
    };
    issued.push(creds);
    const account = /^arn:aws:iam::(\d{12}):role\/(.+)$/.exec(roleArn);
    res.writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': requestId });
    res.end(`<AssumeRoleWithWebIdentityResponse xmlns="${XMLNS}">
  <AssumeRoleWithWebIdentityResult>
    <Audience>sts.amazonaws.com</Audience>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::${account?.[1]}:assumed-role/${account?.[2]}/${sessionName}</Arn>
      <AssumedRoleId>AROA${randomBytes(8).toString('hex').toUpperCase()}:${sessionName}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${creds.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${creds.secretAccessKey}</SecretAccessKey>
      <SessionToken>${creds.sessionToken}</SessionToken>
      <Expiration>${new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z')}</Expiration>
    </Credentials>
    <SubjectFromWebIdentityToken>system:serviceaccount:ai:model-gateway</SubjectFromWebIdentityToken>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata>
    <RequestId>${requestId}</RequestId>
  </ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`);
  };

  const server = createServer({ key: o.tls.key, cert: o.tls.cert }, handler);
  const loop = await listenOnLoopback(server);
  return {
    port: loop.port,
    issued,
    refusals,
    credentials(accessKeyId) {
      const c = issued.find((i) => i.accessKeyId === accessKeyId);
      if (c === undefined || Date.now() >= c.expiresAt) return undefined;
      return { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken };
    },
    close: loop.close,
  };
}
