// Guarantees our webhook signatures verify with the independent Standard Webhooks library, keep the wire format the
// specification defines byte for byte, and tampering breaks them.
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import {
  WEBHOOK_SECRET_PREFIX,
  generateWebhookSecret,
  signWebhook,
  webhookHeaders,
} from '../../src/webhooks/signing.js';

const nowSeconds = (): number => Math.floor(Date.now() / 1000);
const BODY = JSON.stringify({ type: 'balance_change', callback_id: 'cb_1', amount: 1250, note: 'é ✓' });

function signedHeaders(secret: string, msgId = 'cb_1', timestampSeconds = nowSeconds(), body = BODY) {
  return webhookHeaders({ secret, msgId, timestampSeconds, body });
}

test('generated secrets are whsec_ + base64 of 24–32 random bytes, and unique', () => {
  const a = generateWebhookSecret();
  const b = generateWebhookSecret();
  assert.ok(a.startsWith(WEBHOOK_SECRET_PREFIX));
  const key = Buffer.from(a.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  assert.ok(key.length >= 24 && key.length <= 32, `key is ${key.length} bytes`);
  assert.equal(key.toString('base64'), a.slice(WEBHOOK_SECRET_PREFIX.length), 'canonical base64');
  assert.notEqual(a, b);
});

test('headers carry id, timestamp, signature, content type and user agent', () => {
  const secret = generateWebhookSecret();
  const ts = nowSeconds();
  const h = signedHeaders(secret, 'cb_42', ts);
  assert.equal(h['webhook-id'], 'cb_42');
  assert.equal(h['webhook-timestamp'], String(ts));
  assert.match(h['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
  assert.equal(h['content-type'], 'application/json');
  assert.ok(h['user-agent'].length > 0);
});

test('signatures verify with the standardwebhooks package', () => {
  for (let i = 0; i < 20; i++) {
    const secret = generateWebhookSecret();
    const headers = signedHeaders(secret, `cb_${i}`);
    const payload = new Webhook(secret).verify(BODY, { ...headers });
    assert.deepEqual(payload, JSON.parse(BODY));
  }
});

test('our signature equals the library signature byte for byte (incl. non-ASCII body)', () => {
  const secret = generateWebhookSecret();
  const ts = nowSeconds();
  const ours = signWebhook({ secret, msgId: 'cb_x', timestampSeconds: ts, body: BODY });
  assert.equal(ours, new Webhook(secret).sign('cb_x', new Date(ts * 1000), BODY));
  assert.equal(signWebhook({ secret, msgId: 'cb_x', timestampSeconds: ts, body: Buffer.from(BODY) }), ours);
});

test('signatures are the HMAC-SHA256 the specification defines, of id.timestamp.body, byte for byte', () => {
  // The published Standard Webhooks example: secret, id, timestamp and payload with their signature.
  const example = {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    msgId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    timestampSeconds: 1614265330,
    body: '{"test": 2432232314}',
  };
  assert.equal(signWebhook(example), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  // The same computed here from the definition, for fresh secrets and a non-ASCII body.
  for (let i = 0; i < 20; i++) {
    const secret = generateWebhookSecret();
    const ts = nowSeconds() - i;
    const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
    const mac = createHmac('sha256', key).update(`cb_${i}.${ts}.${BODY}`).digest('base64');
    assert.equal(signedHeaders(secret, `cb_${i}`, ts)['webhook-signature'], `v1,${mac}`);
  }
});

test('tampered body, timestamp, id or secret fails verification', () => {
  const secret = generateWebhookSecret();
  const headers = signedHeaders(secret);
  const wh = new Webhook(secret);
  assert.throws(() => wh.verify(BODY.replace('1250', '9250'), { ...headers }), /signature/i);
  assert.throws(
    () => wh.verify(BODY, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }),
    /signature/i,
  );
  assert.throws(() => wh.verify(BODY, { ...headers, 'webhook-id': 'cb_2' }), /signature/i);
  assert.throws(() => new Webhook(generateWebhookSecret()).verify(BODY, { ...headers }), /signature/i);
});

test('malformed secrets are refused rather than silently producing wrong keys', () => {
  const base = { msgId: 'cb_1', timestampSeconds: nowSeconds(), body: BODY };
  assert.throws(() => signWebhook({ ...base, secret: 'c2VjcmV0' }), /whsec_/);
  assert.throws(() => signWebhook({ ...base, secret: 'whsec_' }), /empty/);
});
