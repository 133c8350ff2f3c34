// A Warning Event (core/v1, reason BudgetThresholdCrossed) on a Group or GatewayToken whose money limit's spend is
// past its warnAt, created by the elected replica on the usage-status timer, from the same read as status.usage. Once per crossing per window: the Event's name is
// derived from the object, the limit and the window, so a second replica, a new leader or a restart creating it
// again gets 409 AlreadyExists, which counts as done. Paced by the usage writer's token bucket.
import { createHash } from 'node:crypto';
import { API_GROUP, API_VERSION, type Kind } from '../compile/resources.js';
import type { BudgetUse } from '../model/money-limits.js';
import type { Logger } from '../observability/logger.js';
import { kubeRequest, type KubeConfig } from '../sources/kubernetes/kube-client.js';
import type { StatusApi } from './status-writer.js';
import type { TokenBucket } from './token-bucket.js';

export const BUDGET_EVENT_REASON = 'BudgetThresholdCrossed';
const COMPONENT = 'model-gateway';
/** The longest object name Kubernetes accepts (a DNS subdomain). */
const MAX_NAME = 253;

export interface EventsApi {
  /** POST of a core/v1 Event; a rejection's `code` is the HTTP status (409 when it exists). */
  createEvent(namespace: string, body: Record<string, unknown>): Promise<unknown>;
}

export function kubernetesEventsApi(kc: KubeConfig): EventsApi {
  return { createEvent: (namespace, body) => kubeRequest(kc, `/api/v1/namespaces/${namespace}/events`, { method: 'POST', body }) };
}

/** Past the threshold: spent ≥ warnAt % of the limit (integers, as the response header decides it). */
function pastWarnAt(u: BudgetUse): boolean {
  return u.spent * 100 >= u.warnAt * u.limit;
}

/** The window as a name part and as read: 20261125 / 2026-11-25 for a UTC day, 202611 / 2026-11 for a month. */
function windowId(u: BudgetUse): { id: string; text: string } {
  const text = new Date(u.windowStart).toISOString().slice(0, u.window === 'day' ? 10 : 7);
  return { id: text.replaceAll('-', ''), text };
}

const sha8 = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 8);

/**
 * `<name>.budget-<group|token>-<limit>[-<model>]-<window>`, e.g. `team-a.budget-group-costpermonth-202611`: one per
 * object, limit and window. A model is made DNS-safe and followed by a hash of its exact id (two ids may read alike);
 * a name past 253 characters is cut and ends in a hash of the whole.
 */
export function budgetEventName(u: BudgetUse): string {
  const model = u.model === undefined ? '' : `-${u.model.toLowerCase().replaceAll(/[^a-z0-9.-]+/g, '-')}-${sha8(u.model)}`;
  const name = `${u.name}.budget-${u.kind === 'Group' ? 'group' : 'token'}-${u.field.toLowerCase()}${model}-${windowId(u).id}`;
  if (name.length <= MAX_NAME) return name;
  return `${name.slice(0, MAX_NAME - 9).replace(/[^a-z0-9]+$/, '')}-${sha8(name)}`;
}

/** What the Event says: the limit, the percentage and the window; amounts and keys are not in it. */
export function budgetEventMessage(u: BudgetUse): string {
  const percent = u.limit === 0 ? 100 : Math.floor((u.spent * 100) / u.limit);
  const limit = u.model === undefined ? u.field : `${u.field} for model ${u.model}`;
  const { text } = windowId(u);
  return `${limit} is ${percent}% spent (warnAt ${u.warnAt}%) in the UTC ${u.window} ${text}`;
}

export interface BudgetEventsOptions {
  readonly events: EventsApi;
  /** Reads the object for its uid, so that `kubectl describe` lists the Event with it. */
  readonly api: Pick<StatusApi, 'get'>;
  readonly isLeader: () => boolean;
  /** Shared with the status.usage writer: Events and usage patches draw on one budget of API writes. */
  readonly bucket: TokenBucket;
  /** This replica (reportingInstance). */
  readonly identity: string;
  readonly logger?: Logger;
  readonly now?: () => Date;
}

export class BudgetEvents {
  readonly #o: BudgetEventsOptions;
  /** Names created (or found existing) whose limit is still past its threshold: not asked for again. */
  #done = new Set<string>();

  constructor(options: BudgetEventsOptions) {
    this.#o = options;
  }

  /**
   * One pass over where each money limit with a warnAt stands (read with the usage-status round it follows; tests
   * call it directly); `signal` stops it while it waits to write.
   */
  async round(list: readonly BudgetUse[], signal?: AbortSignal): Promise<void> {
    if (!this.#o.isLeader()) return;
    const past = list.filter(pastWarnAt);
    // A window that ended, or a limit raised above the spend, drops out: a name is remembered only while current.
    const names = new Set(past.map(budgetEventName));
    this.#done = new Set([...this.#done].filter((n) => names.has(n)));
    for (const u of past) {
      const name = budgetEventName(u);
      if (this.#done.has(name)) continue;
      if (!this.#o.isLeader() || !(await this.#o.bucket.take(signal))) return;
      if (await this.#create(name, u)) this.#done.add(name);
    }
  }

  async #create(name: string, u: BudgetUse): Promise<boolean> {
    const object = `${u.kind}/${u.namespace}/${u.name}`;
    try {
      const found = await this.#o.api.get(u.kind as Kind, u.namespace, u.name);
      const now = (this.#o.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
      await this.#o.events.createEvent(u.namespace, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace: u.namespace },
        involvedObject: { apiVersion: `${API_GROUP}/${API_VERSION}`, kind: u.kind, namespace: u.namespace, name: u.name, uid: found.metadata.uid },
        type: 'Warning',
        reason: BUDGET_EVENT_REASON,
        message: budgetEventMessage(u),
        source: { component: COMPONENT },
        reportingComponent: COMPONENT,
        reportingInstance: this.#o.identity,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      });
      this.#o.logger?.info({ object, event: name }, 'budget threshold crossed: event created');
      return true;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 409) return true; // another replica, or this one before a restart, created it
      // 404: the object was deleted meanwhile; anything else: the next round tries again.
      if (code !== 404) this.#o.logger?.warn({ object, event: name, code }, 'budget event create failed');
      return false;
    }
  }
}
