// How a backend is reached beyond its base URL: the credential it is sent, the headers and query parameters added
// to every request, and how family paths are laid out. Compiled from spec.backends[] with Secret values resolved;
// the data plane (dataplane/upstream/) turns it into what each attempt sends. Values from Secrets are never logged.

/** A credential the gateway holds itself (no exchange with an identity service). */
type StaticAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'bearer'; readonly key: string }
  | { readonly kind: 'header'; readonly header: string; readonly key: string }
  | { readonly kind: 'query'; readonly param: string; readonly key: string };

export interface AwsKeys {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

/** A credential obtained at run time: a request signature, or an access token from an identity service. */
export type IdentityAuth =
  /** Keys from a Secret, or undefined: the pod's identity through the AWS SDK's default chain. */
  | { readonly kind: 'awsSigV4'; readonly region: string; readonly service: string; readonly keys: AwsKeys | undefined }
  /** A service account's JSON key from a Secret, or undefined: workload identity / application default credentials. */
  | { readonly kind: 'gcp'; readonly serviceAccountKey: string | undefined; readonly scopes: readonly string[] }
  | {
      readonly kind: 'azureAD';
      readonly tenantId: string | undefined;
      readonly clientId: string | undefined;
      /** A client secret from a Secret, or undefined: workload identity (federated token file). */
      readonly clientSecret: string | undefined;
      readonly scope: string;
      readonly authorityHost: string | undefined;
    };

export type BackendAuth = StaticAuth | IdentityAuth;

const IDENTITY_AUTH_KINDS: ReadonlySet<BackendAuth['kind']> = new Set(['awsSigV4', 'gcp', 'azureAD']);

export function isIdentityAuth(auth: BackendAuth): auth is IdentityAuth {
  return IDENTITY_AUTH_KINDS.has(auth.kind);
}

/** What users call each kind in messages (never a value). */
export const AUTH_LABEL: Readonly<Record<BackendAuth['kind'], string>> = {
  none: 'no credential',
  bearer: 'a bearer key',
  header: 'a key header',
  query: 'a key parameter',
  awsSigV4: 'AWS SigV4 credentials',
  gcp: 'a Google access token',
  azureAD: 'a Microsoft Entra access token',
};

/** A header or query parameter added to every request; `secret` when its value came from a Secret (masked in answers). */
export interface BackendParam {
  /** Lower case for headers; as written for query parameters. */
  readonly name: string;
  readonly value: string;
  readonly secret: boolean;
}

/** openai: baseURL + family path. azureDeployments: baseURL + /deployments/{model} + family path, where Azure has one. */
export type PathStyle = 'openai' | 'azureDeployments';
