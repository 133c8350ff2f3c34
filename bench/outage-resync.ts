// npm run bench:outage — how long after an API-server outage a change shows, with the production timings (each
// reflector's backoff 0.5 s doubling to 30 s, the shared probe every 0.5-1 s). The fake API server stops listening
// (connections refused) for BENCH_OUTAGE_S seconds (default 95, as in issue 12), comes back, and a change is made
// at once to each kind (ModelRoute, Group, GatewayToken, Secret); the time until the source delivers each is
// printed, with the requests the source sent while the server was down (503 mode only: a refused connection never
// reaches the server). Not a test: the figures depend on timing and the machine. Loopback only; bounded by the outage.
//   BENCH_OUTAGE_S=95 BENCH_OUTAGE_MODE=refused|503 npm run bench:outage
import { KubernetesSource } from '../src/sources/kubernetes/kubernetes-source.js';
import { SnapshotRecorder } from '../test/config/source-contract.js';
import { applyEveryKind, changeEveryKind, comeBack, goDown } from '../test/config/sources/outage.js';
import { kubeConfigFor } from '../test/fake-apiserver/kubeconfig.js';
import { FakeApiServer } from '../test/fake-apiserver/server.js';

const NS = 'bench';
const OUTAGE_S = Number(process.env.BENCH_OUTAGE_S ?? 95);
const MODE = process.env.BENCH_OUTAGE_MODE === '503' ? '503' : 'refused';

const api = new FakeApiServer();
await api.start();
applyEveryKind(api, NS);
const source = new KubernetesSource({ kubeConfig: kubeConfigFor(api.url), namespaces: [NS] });
const rec = new SnapshotRecorder();
await source.start(rec.onSnapshot);

const requestsBefore = api.requests.length;
await goDown(api, MODE);
await new Promise((r) => setTimeout(r, OUTAGE_S * 1000));
const duringOutage = api.requests.length - requestsBefore;
const errors = source.stats().map((s) => `${s.resource.split(' ')[0]}: ${s.stats.errors}`);
await comeBack(api, MODE);
const seen = await changeEveryKind(api, rec, NS, 120_000);
console.log(`outage: ${OUTAGE_S} s, connections ${MODE}; failures per reflector: ${errors.join(', ')}`);
if (MODE === '503') console.log(`requests during the outage: ${duringOutage} (${(duringOutage / OUTAGE_S).toFixed(2)}/s)`);
console.log(`change visible after the server's return (ms): ${JSON.stringify(seen)}; all kinds: ${Math.max(...Object.values(seen))} ms`);
await source.stop();
await api.stop();
