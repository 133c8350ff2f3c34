// The shape of `status` the gateway writes on its three kinds (the CRDs' status schema is generated from this).
// Conditions follow metav1.Condition so generic tooling (kubectl wait --for=condition=Ready, Argo CD health,
// kstatus) understands them.
import { z } from 'zod';

const ConditionSchema = z
  .object({
    type: z.string().min(1).max(316).describe('Condition type: Accepted (spec valid, no conflict), ResolvedRefs (Secrets and Group found) or Ready (serving).'),
    status: z.enum(['True', 'False', 'Unknown']).describe('True, False or Unknown.'),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/, 'a CamelCase reason')
      .describe('Machine-readable CamelCase reason, e.g. SecretNotFound.'),
    message: z.string().max(32768).describe('Human-readable details; never contains a Secret value.'),
    observedGeneration: z.number().int().min(0).optional().describe('metadata.generation the condition was computed from.'),
    lastTransitionTime: z.iso.datetime({ offset: true }).describe('When the status of this condition last changed.'),
  })
  .strict();
export type ResourceCondition = z.infer<typeof ConditionSchema>;

const UsedSchema = z
  .object({
    used: z.number().int().min(0).describe('Counted in the current window (for concurrentRequests: in flight now).'),
    limit: z.number().int().min(0).describe('The limit, as the spec sets it.'),
  })
  .strict();

// Spend is money: decimal strings in the gateway's currency, as the spec's money limits are written.
const SpendSchema = z
  .object({
    used: z.string().max(32).describe("Spent in the current window (known costs), in the gateway's currency."),
    limit: z.string().max(32).optional().describe('The money limit, as the spec sets it.'),
  })
  .strict();

const UsageSchema = z
  .object({
    requestsPerMinute: UsedSchema.optional(),
    tokensPerMinute: UsedSchema.optional(),
    tokensPerDay: UsedSchema.optional(),
    tokensPerMonth: UsedSchema.optional(),
    concurrentRequests: UsedSchema.optional(),
    costPerDay: SpendSchema.optional(),
    costPerMonth: SpendSchema.optional(),
    updatedAt: z.iso.datetime({ offset: true }).describe('When the gateway read these counts.'),
  })
  .strict()
  .describe(
    "Usage of this object's own limits in their current windows (UTC minute, day, month), read from the shared counters and written by the elected replica at most once per object per interval.",
  );

export const ResourceStatusSchema = z
  .object({
    observedGeneration: z.number().int().min(0).optional().describe('metadata.generation of the spec the gateway last processed.'),
    conditions: z
      .array(ConditionSchema)
      .max(8)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
      .describe('Accepted, ResolvedRefs and the summary Ready, written by the elected gateway replica.'),
    warnings: z
      .array(z.string().max(1024))
      .max(16)
      .optional()
      .describe('Things that do not stop the object from working but are probably mistakes, e.g. a glob matching no model.'),
    usage: UsageSchema.optional(),
  })
  .strict()
  .describe('Observed state, written by the gateway.');
export type ResourceStatus = z.infer<typeof ResourceStatusSchema>;
