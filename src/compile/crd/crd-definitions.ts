// Builds the three CustomResourceDefinitions from the zod schemas (the one source of truth for shapes).
// scripts/generate-crds.ts writes them to crds/; crd-definitions.test.ts fails when the committed files are stale.
import { stringify } from 'yaml';
import { z } from 'zod';
import { CATEGORY, RESOURCE_NAMES } from '../resource-names.js';
import { ResourceStatusSchema } from '../resource-status.js';
import { API_GROUP, API_VERSION, KINDS, SPEC_SCHEMAS, type Kind } from '../resources.js';
import { toStructuralSchema, type JsonSchema } from './structural-schema.js';

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
}

const READY: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Whether the gateway serves this object (the Ready condition).',
};
const REASON: PrinterColumn = {
  name: 'Reason',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
  description: 'Reason of the Ready condition.',
  priority: 1, // shown with -o wide
};
/** Usage of the object's own limits (status.usage), next to the limit where one is set. */
const USAGE_COLUMNS: PrinterColumn[] = [
  {
    name: 'Tokens Today',
    type: 'integer',
    jsonPath: '.status.usage.tokensPerDay.used',
    description: 'Tokens counted today (UTC) against limits.tokensPerDay.',
  },
  {
    name: 'Month Tokens',
    type: 'integer',
    jsonPath: '.status.usage.tokensPerMonth.used',
    description: 'Tokens counted this calendar month (UTC) against limits.tokensPerMonth.',
  },
  { name: 'Month Budget', type: 'integer', jsonPath: '.spec.limits.tokensPerMonth', description: 'limits.tokensPerMonth.' },
  {
    name: 'Month Spend',
    type: 'string',
    jsonPath: '.status.usage.costPerMonth.used',
    description: "Spend this calendar month (UTC), known costs, in the gateway's currency; shown where a money limit is set.",
  },
  { name: 'Spend Budget', type: 'string', jsonPath: '.spec.limits.costPerMonth', description: 'limits.costPerMonth.' },
  { name: 'RPM', type: 'integer', jsonPath: '.status.usage.requestsPerMinute.used', description: 'Requests this minute.', priority: 1 },
  { name: 'TPM', type: 'integer', jsonPath: '.status.usage.tokensPerMinute.used', description: 'Tokens this minute.', priority: 1 },
];
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since creation.' };

const KIND_INFO: Record<Kind, { description: string; columns: PrinterColumn[] }> = {
  ModelRoute: {
    description: 'ModelRoute publishes one model name on the gateway and says which upstream backends serve it.',
    columns: [
      { name: 'Model', type: 'string', jsonPath: '.spec.model', description: 'Public model id (defaults to the object name).' },
      { name: 'Backends', type: 'string', jsonPath: '.spec.backends[*].name', description: 'Backend names, in spec order.' },
      READY,
      REASON,
      AGE,
    ],
  },
  Group: {
    description: 'Group lists the models (names or globs) that the GatewayTokens in this group may use.',
    columns: [
      READY,
      { name: 'Models', type: 'string', jsonPath: '.spec.models', description: 'Allowed model names or globs.', priority: 1 },
      ...USAGE_COLUMNS,
      AGE,
    ],
  },
  GatewayToken: {
    description: 'GatewayToken is one client API key of the gateway and the Group it currently belongs to.',
    columns: [
      { name: 'Group', type: 'string', jsonPath: '.spec.group', description: "The token's current Group." },
      READY,
      { name: 'Expires', type: 'string', jsonPath: '.spec.expiresAt', description: 'When the key stops working.' },
      REASON,
      ...USAGE_COLUMNS,
      AGE,
    ],
  },
};

function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  // io: 'input' so fields with defaults are optional (the API server fills them in), as users write them.
  return z.toJSONSchema(schema, { io: 'input', target: 'openapi-3.0' }) as JsonSchema;
}

export function buildCrd(kind: Kind): Record<string, unknown> {
  const names = RESOURCE_NAMES[kind];
  const info = KIND_INFO[kind];
  const openAPIV3Schema: JsonSchema = {
    type: 'object',
    description: info.description,
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string', description: `${API_GROUP}/${API_VERSION}` },
      kind: { type: 'string', description: kind },
      metadata: { type: 'object' },
      spec: toStructuralSchema(jsonSchemaOf(SPEC_SCHEMAS[kind]), 'spec'),
      status: toStructuralSchema(jsonSchemaOf(ResourceStatusSchema), 'status'),
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${names.plural}.${API_GROUP}`,
      labels: { 'app.kubernetes.io/name': 'model-gateway', 'app.kubernetes.io/part-of': 'model-gateway' },
    },
    spec: {
      group: API_GROUP,
      names: {
        kind,
        listKind: `${kind}List`,
        plural: names.plural,
        singular: names.singular,
        shortNames: [...names.shortNames],
        categories: [CATEGORY],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: info.columns,
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}

export interface CrdFile {
  /** File name inside crds/. */
  readonly file: string;
  readonly text: string;
}

const HEADER = '# Generated by `npm run generate:crds` from src/compile/resources.ts. Do not edit by hand.\n';

export function buildCrdFiles(): CrdFile[] {
  return KINDS.map((kind) => ({
    file: `${API_GROUP}_${RESOURCE_NAMES[kind].plural}.yaml`,
    text: HEADER + stringify(buildCrd(kind), { lineWidth: 0 }),
  }));
}
