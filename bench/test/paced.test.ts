// Guarantees: the open-loop generator keeps its schedule whatever the answers take (a slow server does not
// slow it down, as it would a closed loop), every request sent gets its answer counted once and judged
// against what it asked, and its figures become a phase row beside the closed-loop phase it ran with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { figuresOf, PacedLoad, pacedOutcome, pacedSpec, type PacedRaw } from '../lib/paced.js';
import { entitlementChecksPhase, pacedPhase, type PhaseResult } from '../lib/scenarios.js';

const SLOW_MS = 40;

test('an open-loop schedule keeps its rate while every answer takes 40 ms, and judges each answer', async () => {
  // Answers `{data: {feature, has_access}}` for the feature the path names after SLOW_MS; `/wrong` names another.
  let served = 0;
  const server = createServer((req, res) => {
    served++;
    const feature = (req.url ?? '').split('/')[1]?.split('?')[0];
    const body = { data: { feature: feature === 'wrong' ? 'other' : feature, has_access: served % 2 === 0 } };
    setTimeout(() => res.end(JSON.stringify(body)), SLOW_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const rate = 400;
    const spec = {
      ...pacedSpec([`http://127.0.0.1:${port}`], 'Basic x', rate, [
        { path: '/sso', kind: 'boolean', expectFeature: 'sso' },
        { path: '/calls?quantity=2', kind: 'metered', expectFeature: 'calls' },
        { path: '/wrong', kind: 'boolean', expectFeature: 'wrong' },
      ]),
      warmupRequests: 3,
    };
    const load = await PacedLoad.start(spec);
    assert.equal(served, 3, 'the warm-up requests, before the schedule');
    load.begin();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const out = await load.finish();
    const f = out.figures;
    // A closed loop of one connection would have sent 1,000 / 40 = 25; the schedule starts ~400.
    assert.ok(f.sent >= 0.8 * rate && f.sent <= 1.1 * rate, `sent ${f.sent}`);
    assert.ok(f.sentPerS >= 0.8 * rate, `${f.sentPerS} requests/s started`);
    assert.equal(out.responses, f.sent, 'every request sent was answered');
    assert.equal(out.unanswered, 0);
    assert.equal(out.ok, f.sent);
    assert.equal(served, f.sent + 3);
    assert.equal(out.malformed, Math.floor(f.sent / 3), 'the answers naming another feature');
    assert.equal(f.granted + f.denied, f.sent);
    assert.ok(out.latencyMs.p50 >= SLOW_MS, `p50 ${out.latencyMs.p50}`);
    assert.ok(f.fromDueMs.p50 >= out.latencyMs.p50 - 1e-9, 'from the due time: never less than from the send');
    assert.deepEqual(Object.keys(f.byKind).sort(), ['boolean', 'metered']);
    assert.equal((f.byKind.boolean?.requests ?? 0) + (f.byKind.metered?.requests ?? 0), f.sent);
    assert.ok(f.socketsOpened > 1 && f.socketsOpened <= spec.maxSockets, `${f.socketsOpened} sockets`);
  } finally {
    server.close();
  }
});

test('paced figures: percentiles per kind, the rate over the schedule, and the phase row', () => {
  const raw: PacedRaw = {
    sent: 4,
    responses: 4,
    ok: 3,
    statusCodes: { 200: 3, 503: 1 },
    errors: 0,
    timeouts: 0,
    unanswered: 0,
    malformed: 0,
    granted: 2,
    denied: 1,
    errorSamples: ['503 busy'],
    elapsedS: 2.5,
    scheduleS: 2,
    fromSend: Float64Array.from([1, 2, 3, 10]),
    fromDue: Float64Array.from([1.5, 2.5, 3.5, 10.5]),
    kinds: Uint8Array.from([0, 1, 0, 1]),
    sendLag: Float64Array.from([0.5, 0.5, 0.5, 0.5]),
    kindNames: ['boolean', 'metered'],
    socketsOpened: 2,
    loopUtilization: 0.1,
  };
  const out = pacedOutcome({ perSecond: 2, maxSockets: 64 }, raw);
  assert.equal(out.figures.sentPerS, 2);
  assert.equal(out.non2xx, 1);
  assert.deepEqual(out.latencyMs, figuresOf(raw.fromSend));
  assert.equal(out.latencyMs.p50, 2);
  assert.equal(out.figures.byKind.boolean?.latencyMs.p99, 3);
  assert.equal(out.figures.byKind.metered?.latencyMs.p99, 10);
  const beside = { serverCpuPercent: 77, otherCpuPercent: 5, requests: 999, eventsPerRequest: 1 } as PhaseResult;
  const meta = { scenario: 'entitlements-1', phase: entitlementChecksPhase(1000), eventsPerRequest: 0 };
  const row = pacedPhase(beside, { ...meta, baselineEvents: undefined }, out);
  assert.equal(row.phase, 'checks, 1,000/s open loop');
  assert.equal(row.serverCpuPercent, 77, 'the CPU of the window it shared');
  assert.equal(row.requests, 3);
  assert.equal(row.requestsPerS, 3 / 2.5);
  assert.equal(row.eventsPerRequest, 0);
  assert.equal(row.connections, 2);
  assert.deepEqual(row.ratios, {});
  assert.equal(row.paced, out.figures);
});
