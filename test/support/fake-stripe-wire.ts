/**
 * The fake Stripe's wire format (fake-stripe.ts): form bodies in Stripe's bracket notation (`card[token]=tok_visa`,
 * `expand[0]=x`), Stripe-shaped errors and ids, and the HTTP plumbing of its answers.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const REQUEST_BODY_MAX_BYTES = 1_000_000;
export const ID_RANDOM_BYTES = 12;

export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormObject = { [key: string]: FormValue };

export type Json = Record<string, unknown>;
export interface Reply {
  status: number;
  body: Json;
}

// ---------------------------------------------------------------------------------------------
// Form bodies in Stripe's bracket notation: `card[token]=tok_visa`, `expand[0]=x`.

function keySegments(key: string): string[] {
  const head = /^[^[]*/.exec(key)?.[0] ?? key;
  const rest = [...key.slice(head.length).matchAll(/\[([^\]]*)\]/g)].map((m) => m[1] ?? '');
  return [head, ...rest];
}

function setNested(target: FormObject, segments: string[], value: string): void {
  const [first, ...rest] = segments;
  if (first === undefined) return;
  if (rest.length === 0) {
    target[first] = value;
    return;
  }
  const existing = target[first];
  const child: FormObject = existing && typeof existing === 'object' && !Array.isArray(existing) ? existing : {};
  target[first] = child;
  setNested(child, rest, value);
}

/** Objects keyed 0..n-1 were arrays before the SDK encoded them. */
function restoreArrays(value: FormValue): FormValue {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const entries = keys.map((k) => [k, restoreArrays(value[k] as FormValue)] as const);
  const isList = keys.length > 0 && keys.every((k, i) => k === String(i));
  return isList ? entries.map(([, v]) => v) : Object.fromEntries(entries);
}

export function parseStripeForm(raw: string): FormObject {
  const out: FormObject = {};
  for (const [key, value] of new URLSearchParams(raw)) setNested(out, keySegments(key), value);
  return restoreArrays(out) as FormObject;
}

export function str(body: FormObject, key: string): string | undefined {
  const v = body[key];
  return typeof v === 'string' ? v : undefined;
}

export function obj(body: FormObject, key: string): FormObject {
  const v = body[key];
  return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
}

export function stringRecord(value: FormObject): Record<string, string> {
  const entries = Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string');
  return Object.fromEntries(entries);
}

// ---------------------------------------------------------------------------------------------
// Stripe-shaped errors.

export interface StripeErrorFields {
  type: 'invalid_request_error' | 'card_error' | 'api_error' | 'idempotency_error';
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  payment_intent?: Json;
  payment_method?: Json;
}

export function errorReply(status: number, fields: StripeErrorFields): Reply {
  return { status, body: { error: fields } };
}

export function missing(what: string, id: string, param?: string): Reply {
  const fields: StripeErrorFields = {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${what}: '${id}'`,
    ...(param && { param }),
  };
  return errorReply(param ? 400 : 404, fields);
}

export function invalid(message: string, param?: string, code?: string): Reply {
  return errorReply(400, {
    type: 'invalid_request_error',
    message,
    ...(param && { param }),
    ...(code && { code }),
  });
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(ID_RANDOM_BYTES).toString('hex')}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function headerValue(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? null;
}

/** The body as text, or null when it exceeds the limit. */
export async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req) {
    bytes += (chunk as Buffer).length;
    if (bytes > REQUEST_BODY_MAX_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(html) });
  res.end(html);
}

export function send(res: ServerResponse, reply: Reply, replayed = false): void {
  const payload = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(payload),
    'Request-Id': newId('req'),
    ...(replayed && { 'Idempotent-Replayed': 'true' }),
  });
  res.end(payload);
}
