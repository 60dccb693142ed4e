/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): receivers verify our
 * notifications with any Standard Webhooks library, so the signature comes from the reference
 * one (`standardwebhooks`); this module only adds the secret's generation and the headers.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** A 256-bit HMAC key: within the 24–64 bytes Standard Webhooks asks for, and SHA-256's full strength. */
export const WEBHOOK_SECRET_BYTES = 32;
export const WEBHOOK_USER_AGENT = 'billing-engine-webhooks/1.0';

export interface SignInput {
  /** `whsec_<base64>`; the decoded bytes are the HMAC key. */
  secret: string;
  /** The notification id; identical on every retry so receivers can deduplicate. */
  msgId: string;
  /** Unix seconds of this attempt (wall clock), so receivers can reject replays. */
  timestampSeconds: number;
  /** The exact bytes sent; signing a re-serialised copy would break verification. */
  body: string | Buffer;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
  'user-agent': string;
}

/** The library verifies and signs but has no generator for the JavaScript side. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_BYTES).toString('base64');
}

/** `v1,<base64>`: the Standard Webhooks signature of one attempt. */
export function signWebhook({ secret, msgId, timestampSeconds, body }: SignInput): string {
  // The library would also take a bare base64 key; a secret without the prefix is a corrupt one,
  // and a wrong key fails silently downstream (every receiver rejects every notification).
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new TypeError(`webhook secret must start with ${WEBHOOK_SECRET_PREFIX}`);
  }
  // The library signs whole seconds; the webhook-timestamp header must carry the same number.
  if (!Number.isSafeInteger(timestampSeconds)) {
    throw new TypeError('timestampSeconds must be an integer number of seconds');
  }
  return new Webhook(secret).sign(msgId, new Date(timestampSeconds * 1000), body);
}

export function webhookHeaders(input: SignInput & { userAgent?: string }): WebhookHeaders {
  return {
    'webhook-id': input.msgId,
    'webhook-timestamp': String(input.timestampSeconds),
    'webhook-signature': signWebhook(input),
    'content-type': 'application/json',
    'user-agent': input.userAgent ?? WEBHOOK_USER_AGENT,
  };
}
