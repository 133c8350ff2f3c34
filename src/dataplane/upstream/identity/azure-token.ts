// azureAD: a Microsoft Entra ID access token (Azure OpenAI), from Azure's maintained identity library: a client
// secret, or, without one, workload identity (the federated token file the AKS webhook mounts, with
// AZURE_TENANT_ID / AZURE_CLIENT_ID / AZURE_FEDERATED_TOKEN_FILE in the pod's environment).
import type { IdentityAuth } from '../../../model/backend-auth.js';
import type { TokenSource } from './token-cache.js';

type AzureAuth = Extract<IdentityAuth, { kind: 'azureAD' }>;

interface Credential {
  getToken(scope: string, options: { abortSignal: AbortSignal }): Promise<{ token: string; expiresOnTimestamp: number } | null>;
}

export function azureTokenSource(auth: AzureAuth): TokenSource {
  let credential: Promise<Credential> | undefined;
  return async (signal) => {
    credential ??= (async () => {
      // Loaded on first use: a gateway without Azure backends never pays for the library.
      const identity = await import('@azure/identity');
      const common = auth.authorityHost === undefined ? {} : { authorityHost: auth.authorityHost };
      if (auth.clientSecret !== undefined)
        return new identity.ClientSecretCredential(auth.tenantId ?? '', auth.clientId ?? '', auth.clientSecret, common) as Credential;
      return new identity.WorkloadIdentityCredential({
        ...common,
        ...(auth.tenantId === undefined ? {} : { tenantId: auth.tenantId }),
        ...(auth.clientId === undefined ? {} : { clientId: auth.clientId }),
      }) as Credential;
    })();
    credential.catch(() => {
      credential = undefined;
    });
    // A fetch the cache gave up on is aborted, and the next one starts with a new credential, whatever the library
    // still waits for.
    const mine = credential;
    signal.addEventListener('abort', () => {
      if (credential === mine) credential = undefined;
    });
    const token = await (await credential).getToken(auth.scope, { abortSignal: signal });
    if (!token) throw new Error('the Azure identity library returned no access token');
    return { token: token.token, expiresAt: token.expiresOnTimestamp };
  };
}
