// The x-kubernetes-validations rules of a CRD, found by walking its schemas, so that the tests which check rules
// (type-checked in src/compile/crd/cel-types.test.ts, enforced by a real API server in test/envtest/) cover a rule
// added later without being told about it.

/** The parts of an OpenAPI v3 schema node of a CRD that decide a rule's CEL types. */
export interface SchemaNode {
  type?: string;
  format?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
  'x-kubernetes-validations'?: { rule: string; message?: string }[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
}

interface Crd {
  spec: { names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: SchemaNode } }[] };
}

export interface ValidationRule {
  kind: string;
  version: string;
  /** Where the rule sits: spec.backends[].auth (`[]` a list's items, `.*` a map's values, '' the root). */
  path: string;
  /** The schema node the rule sits on (its `self`). */
  node: SchemaNode;
  rule: string;
  message: string;
}

export function validationRules(crd: Crd): ValidationRule[] {
  const out: ValidationRule[] = [];
  const { kind } = crd.spec.names;
  for (const { name: version, schema } of crd.spec.versions) {
    const visit = (node: SchemaNode, path: string): void => {
      for (const v of node['x-kubernetes-validations'] ?? [])
        out.push({ kind, version, path, node, rule: v.rule, message: v.message ?? `failed rule: ${v.rule}` });
      const child = (name: string) => (path ? `${path}.${name}` : name);
      for (const [name, sub] of Object.entries(node.properties ?? {})) visit(sub, child(name));
      if (node.items) visit(node.items, `${path}[]`);
      if (typeof node.additionalProperties === 'object') visit(node.additionalProperties, child('*'));
    };
    visit(schema.openAPIV3Schema, '');
  }
  return out;
}
