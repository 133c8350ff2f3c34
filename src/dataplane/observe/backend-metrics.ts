// model_gateway_backend_state: one series per configured backend and state (healthy, ejected, probation), 1 for
// the state it is in and 0 for the others (the Prometheus "state set" pattern, so alerts can say
// `model_gateway_backend_state{state="ejected"} == 1`). Read at scrape time from the current routing table and
// passive health, so backends that left the config disappear from the output with no bookkeeping.
import { Gauge, type Registry } from 'prom-client';
import type { TableHolder } from '../../model/routing-table.js';
import { BACKEND_STATES, type BackendHealth } from '../policy/health.js';

export function registerBackendStateGauge(registry: Registry, tables: TableHolder, health: BackendHealth): Gauge<'backend' | 'state'> {
  return new Gauge({
    name: 'model_gateway_backend_state',
    help: 'Passive health of each configured backend (id namespace/route/backend): 1 for its current state (healthy, ejected, probation), 0 for the others.',
    labelNames: ['backend', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      const table = tables.get();
      if (!table) return;
      for (const route of table.routes.values())
        for (const b of route.backends) {
          const current = health.state(b.id);
          for (const s of BACKEND_STATES) this.set({ backend: b.id, state: s }, s === current ? 1 : 0);
        }
    },
  });
}
