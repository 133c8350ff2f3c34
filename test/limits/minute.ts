// Limit counters are per calendar minute: a test part that must stay inside one window first waits while the
// minute is in its last seconds (a condition on the clock, not a pause standing in for an event).
import { waitUntil } from '../support/wait.js';

export async function insideOneMinute(needMs: number): Promise<void> {
  await waitUntil(() => 60_000 - (Date.now() % 60_000) > needMs, 60_000, 'a minute with room left');
}
