// Guarantee: /metrics is Prometheus text that a parser reads, with request latency by route
// pattern and status, events ingested and group-commit figures; behind BILLING_METRICS_TOKEN when
// set. Every answer carries a request id: the client's when sane, else one the server made.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
// @ts-expect-error: the parser ships no types
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { createAccountWithBalance, signUpCompany, startHarness } from '../support/harness.js';

type Family = { name: string; type: string; metrics: { labels?: Record<string, string>; value?: string }[] };

test('/metrics parses and counts requests, events and group commits; request ids are echoed', async () => {
  const token = 'metrics-token-0123456789';
  const h = await startHarness('sqlite', { BILLING_METRICS_TOKEN: token });
  after(() => h.close());
  const co = await signUpCompany(h);
  const acc = await createAccountWithBalance(h, co, 'tokens', 1000);
  const r = await h.request('POST', `/v1/accounts/${acc}/events`, {
    auth: co.auth,
    headers: { 'request-id': 'req-abc.123' },
    body: [{ type: 'x', cost_override: { amount: 1, denomination: 'tokens' } }],
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('request-id'), 'req-abc.123');
  const insane = await h.request('GET', '/healthz', { headers: { 'request-id': 'has spaces and {braces}' } });
  assert.match(insane.headers.get('request-id') ?? '', /^[0-9a-f-]{36}$/);

  const refused = await h.request('GET', '/metrics');
  assert.equal(refused.status, 401);
  assert.equal(refused.body.error.type, 'authentication_required');
  const res = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  const text = await res.text();
  const families = parsePrometheusTextFormat(text) as Family[];
  const family = (name: string) => {
    const f = families.find((x) => x.name === name);
    assert.ok(f, `${name} is exported`);
    return f;
  };
  const latency = family('billing_http_request_duration_seconds');
  assert.equal(latency.type, 'HISTOGRAM');
  // The parser keeps a histogram's families; its label sets are checked in the text itself.
  assert.match(
    text,
    /billing_http_request_duration_seconds_count\{[^}]*route="\/v1\/accounts\/:\w+\/events"[^}]*status="200"/,
  );
  assert.equal(family('billing_events_ingested_total').metrics[0]!.value, '1');
  assert.equal(family('billing_group_commit_size').type, 'HISTOGRAM');
  assert.equal(family('billing_group_commit_duration_seconds').type, 'HISTOGRAM');
  const pending = family('billing_queue_pending');
  assert.deepEqual(pending.metrics.map((m) => m.labels?.queue).sort(), ['outbox', 'webhook_deliveries']);
  family('billing_queue_oldest_due_age_seconds');
  family('process_cpu_user_seconds_total');
  assert.equal((await fetch(`${h.url}/readyz`)).status, 200);
});
