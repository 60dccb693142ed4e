/**
 * A stand-in for the billing server, in memory, implementing only what the bench uses of the
 * contract (sign-up, company, accounts, balances, credit grants drawn in order, events with holds,
 * settles, transactions).
 * It exists to check the harness itself: `npm run bench -- --server bench/selftest/fake-server.ts`.
 * With FAKE_LEDGER_DRIFT=<n>, the n-th event recorded takes one unit more than its cost from
 * the balance (and the transaction says otherwise): the bench must fail and name the account.
 * Its figures mean nothing.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { listenFromEnv } from '../baselines/listen.js';

const MAX_PAGE = 100;
const DEFAULT_PAGE = 20;
const MAX_EVENTS = 1_000;
const drift = Number(process.env.FAKE_LEDGER_DRIFT ?? '0');

interface Balance {
  account_id: string;
  denomination: string;
  amount: number;
  pending: number;
  transactions: Transaction[];
  grants: Grant[];
}

interface Grant {
  grant_id: string;
  amount: number;
  remaining: number;
  held: number;
  priority: number;
  category: 'promotional' | 'paid';
  expires_at: string | null;
}

interface Allocation {
  grant: Grant;
  amount: number;
}

interface GrantInput {
  amount?: unknown;
  priority?: unknown;
  category?: unknown;
  expires_at?: unknown;
}

interface Transaction {
  transaction_id: string;
  account_id: string;
  denomination: string;
  amount: number;
  balance_after: number;
  kind: string;
  event_id: string | null;
  created_at: string;
}

interface StoredEvent {
  event_id: string;
  account_id: string;
  company_id: string;
  type: string;
  cost: { amount: number; denomination: string };
  state: 'pending' | 'complete' | 'cancelled';
}

/** What each pending event holds of which grant (not shown). */
const heldFrom = new Map<string, Allocation[]>();

interface EventInput {
  type?: unknown;
  cost_override?: { amount?: unknown; denomination?: unknown };
  state?: unknown;
}

const users = new Map<string, { id: string; password: string }>();
const companies = new Map<string, { apiKey: string }>();
const accounts = new Map<string, { companyId: string; balances: Map<string, Balance> }>();
const events = new Map<string, StoredEvent>();
let eventsRecorded = 0;
let sequence = 0;

const id = (prefix: string): string =>
  `${prefix}_${(++sequence).toString(36).padStart(8, '0')}${randomBytes(4).toString('hex')}`;

function basic(request: FastifyRequest): [string, string] | undefined {
  const header = request.headers.authorization;
  if (header === undefined || !header.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString();
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

function fail(reply: FastifyReply, status: number, type: string, message: string): FastifyReply {
  return reply.code(status).send({ error: { type, message } });
}

function company(request: FastifyRequest): string | undefined {
  const creds = basic(request);
  if (creds === undefined) return undefined;
  const found = companies.get(creds[0]);
  return found !== undefined && found.apiKey === creds[1] ? creds[0] : undefined;
}

function balanceView(b: Balance): object {
  return {
    account_id: b.account_id,
    denomination: b.denomination,
    amount: b.amount,
    pending: b.pending,
    available: b.amount - b.pending,
  };
}

function change(b: Balance, amount: number, kind: string, eventId: string | null): void {
  b.amount += amount;
  b.transactions.push({
    transaction_id: id('tx'),
    account_id: b.account_id,
    denomination: b.denomination,
    amount,
    balance_after: b.amount,
    kind,
    event_id: eventId,
    created_at: new Date().toISOString(),
  });
}

const DEFAULT_PRIORITY = 50;

function newGrant(b: Balance, input: GrantInput): Grant {
  const g: Grant = {
    grant_id: id('g'),
    amount: input.amount as number,
    remaining: input.amount as number,
    held: 0,
    priority: typeof input.priority === 'number' ? input.priority : DEFAULT_PRIORITY,
    category: input.category === 'paid' ? 'paid' : 'promotional',
    expires_at: typeof input.expires_at === 'string' ? input.expires_at : null,
  };
  b.grants.push(g);
  return g;
}

/** The contract's drawing order, less what the bench never varies (effective_at). */
function drawingOrder(a: Grant, b: Grant): number {
  const expiry = (g: Grant): number => (g.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(g.expires_at));
  return (
    a.priority - b.priority ||
    expiry(a) - expiry(b) ||
    Number(a.category === 'paid') - Number(b.category === 'paid') ||
    (a.grant_id < b.grant_id ? -1 : 1)
  );
}

/** Takes (or holds) `units` from the grants' unheld units in drawing order; what none covers is not recorded. */
function draw(b: Balance, units: number, hold: boolean): Allocation[] {
  const out: Allocation[] = [];
  let left = units;
  for (const g of [...b.grants].sort(drawingOrder)) {
    const x = Math.min(left, g.remaining - g.held);
    if (x <= 0) continue;
    if (hold) g.held += x;
    else g.remaining -= x;
    out.push({ grant: g, amount: x });
    left -= x;
    if (left === 0) break;
  }
  return out;
}

function grantView(b: Balance, g: Grant): object {
  return {
    ...g,
    account_id: b.account_id,
    denomination: b.denomination,
    status: g.remaining > 0 ? 'active' : 'depleted',
  };
}

const app = Fastify({ logger: false });

app.get('/healthz', async () => ({ ok: true }));
// The bench waits for the engine's /readyz (lib/children.ts); the stand-in is ready at once.
app.get('/readyz', async () => ({ ok: true }));

app.post<{ Body: { email: string; password: string } }>('/v1/users', async (request) => {
  const user = { id: id('u'), password: request.body.password };
  users.set(request.body.email, user);
  return { id: user.id, email: request.body.email };
});

app.post('/v1/companies', async (request, reply) => {
  const creds = basic(request);
  const user = creds === undefined ? undefined : users.get(creds[0]);
  if (creds === undefined || user === undefined || user.password !== creds[1]) {
    return fail(reply, 401, 'authentication_required', 'sign in');
  }
  const companyId = id('c');
  const apiKey = `sk_${randomBytes(16).toString('hex')}`;
  companies.set(companyId, { apiKey });
  return { data: { company_id: companyId, api_key: apiKey } };
});

app.post<{ Params: { cid: string } }>('/v1/companies/:cid/accounts', async (request, reply) => {
  const companyId = company(request);
  if (companyId === undefined) return fail(reply, 401, 'authentication_required', 'credentials');
  if (companyId !== request.params.cid) return fail(reply, 404, 'not_found', 'no such company');
  const accountId = id('a');
  accounts.set(accountId, { companyId, balances: new Map() });
  return { data: { account_id: accountId, balances: [] } };
});

function ownBalance(request: FastifyRequest<{ Params: { aid: string; denom: string } }>): Balance | undefined {
  const companyId = company(request);
  const account = accounts.get(request.params.aid);
  if (companyId === undefined || account === undefined || account.companyId !== companyId) return undefined;
  return account.balances.get(request.params.denom);
}

app.post<{ Params: { aid: string; denom: string }; Body: { amount?: number } }>(
  '/v1/accounts/:aid/balance/:denom',
  async (request, reply) => {
    const companyId = company(request);
    const account = accounts.get(request.params.aid);
    if (companyId === undefined || account === undefined || account.companyId !== companyId) {
      return fail(reply, 404, 'not_found', 'no such account');
    }
    const balance: Balance = {
      account_id: request.params.aid,
      denomination: request.params.denom,
      amount: 0,
      pending: 0,
      transactions: [],
      grants: [],
    };
    account.balances.set(request.params.denom, balance);
    const amount = request.body?.amount ?? 0;
    if (amount > 0) newGrant(balance, { amount });
    change(balance, amount, 'grant', null);
    return { data: balanceView(balance) };
  },
);

app.get<{ Params: { aid: string; denom: string } }>('/v1/accounts/:aid/balance/:denom', async (request, reply) => {
  const balance = ownBalance(request);
  return balance === undefined ? fail(reply, 404, 'not_found', 'no such balance') : { data: balanceView(balance) };
});

app.post<{ Params: { aid: string; denom: string }; Body: GrantInput }>(
  '/v1/accounts/:aid/balance/:denom/grants',
  async (request, reply) => {
    const balance = ownBalance(request);
    if (balance === undefined) return fail(reply, 404, 'not_found', 'no such balance');
    const amount = request.body?.amount;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1)
      return fail(reply, 400, 'invalid_request', 'amount');
    const g = newGrant(balance, request.body);
    change(balance, amount, 'grant', null);
    return reply.code(201).send({ data: grantView(balance, g) });
  },
);

app.get<{ Params: { aid: string; denom: string } }>(
  '/v1/accounts/:aid/balance/:denom/grants',
  async (request, reply) => {
    const balance = ownBalance(request);
    if (balance === undefined) return fail(reply, 404, 'not_found', 'no such balance');
    const live = balance.grants.filter((g) => g.remaining > 0).sort(drawingOrder);
    return { data: live.map((g) => grantView(balance, g)), has_more: false, next_cursor: null };
  },
);

app.post<{ Params: { aid: string }; Body: EventInput[] }>('/v1/accounts/:aid/events', async (request, reply) => {
  const companyId = company(request);
  const account = accounts.get(request.params.aid);
  if (companyId === undefined || account === undefined || account.companyId !== companyId) {
    return fail(reply, 404, 'not_found', 'no such account');
  }
  const input = request.body;
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_EVENTS) {
    return fail(reply, 400, 'invalid_request', 'events');
  }
  for (const e of input) {
    const amount = e.cost_override?.amount;
    const denomination = e.cost_override?.denomination;
    if (
      typeof e.type !== 'string' ||
      typeof amount !== 'number' ||
      typeof denomination !== 'string' ||
      !account.balances.has(denomination)
    ) {
      return fail(reply, 400, 'invalid_request', 'event');
    }
  }
  const ids: string[] = [];
  for (const e of input) {
    const cost = { amount: e.cost_override?.amount as number, denomination: e.cost_override?.denomination as string };
    const balance = account.balances.get(cost.denomination) as Balance;
    const event: StoredEvent = {
      event_id: id('ev'),
      account_id: request.params.aid,
      company_id: companyId,
      type: e.type as string,
      cost,
      state: e.state === 'pending' ? 'pending' : 'complete',
    };
    events.set(event.event_id, event);
    ids.push(event.event_id);
    eventsRecorded++;
    if (event.state === 'pending') {
      balance.pending += cost.amount;
      heldFrom.set(event.event_id, draw(balance, cost.amount, true));
    } else {
      draw(balance, cost.amount, false);
      change(balance, -cost.amount, 'usage', event.event_id);
      if (eventsRecorded === drift) balance.amount -= 1;
    }
  }
  return { events_submitted: ids.length, event_ids: ids };
});

function ownEvent(request: FastifyRequest<{ Params: { eid: string } }>): StoredEvent | undefined {
  const companyId = company(request);
  const event = events.get(request.params.eid);
  return companyId === undefined || event === undefined || event.company_id !== companyId ? undefined : event;
}

app.get<{ Params: { eid: string } }>('/v1/events/:eid', async (request, reply) => {
  const event = ownEvent(request);
  return event === undefined ? fail(reply, 404, 'not_found', 'no such event') : { data: event };
});

app.put<{ Params: { eid: string }; Body: { state?: string } }>('/v1/events/:eid', async (request, reply) => {
  const event = ownEvent(request);
  if (event === undefined) return fail(reply, 404, 'not_found', 'no such event');
  const target = request.body?.state;
  if (target !== 'complete' && target !== 'cancelled') return fail(reply, 400, 'invalid_request', 'state');
  if (event.state === target) return { data: event };
  if (event.state !== 'pending') return fail(reply, 409, 'conflict', 'not pending');
  const balance = accounts.get(event.account_id)?.balances.get(event.cost.denomination) as Balance;
  balance.pending -= event.cost.amount;
  let covered = 0;
  for (const a of heldFrom.get(event.event_id) ?? []) {
    a.grant.held -= a.amount;
    if (target === 'complete') a.grant.remaining -= a.amount;
    covered += a.amount;
  }
  heldFrom.delete(event.event_id);
  if (target === 'complete') {
    draw(balance, event.cost.amount - covered, false);
    change(balance, -event.cost.amount, 'usage', event.event_id);
  }
  event.state = target;
  return { data: event };
});

app.get<{ Params: { aid: string }; Querystring: { denomination?: string; limit?: string; starting_after?: string } }>(
  '/v1/accounts/:aid/transactions',
  async (request, reply) => {
    const companyId = company(request);
    const account = accounts.get(request.params.aid);
    if (companyId === undefined || account === undefined || account.companyId !== companyId) {
      return fail(reply, 404, 'not_found', 'no such account');
    }
    const limit = Math.min(MAX_PAGE, Number(request.query.limit ?? DEFAULT_PAGE));
    const all = [...account.balances.values()]
      .filter((b) => request.query.denomination === undefined || b.denomination === request.query.denomination)
      .flatMap((b) => b.transactions)
      .reverse();
    let start = 0;
    if (request.query.starting_after !== undefined) {
      start = all.findIndex((t) => t.transaction_id === request.query.starting_after) + 1;
    }
    const data = all.slice(start, start + limit);
    const hasMore = start + limit < all.length;
    return { data, has_more: hasMore, next_cursor: hasMore ? (data[data.length - 1]?.transaction_id ?? null) : null };
  },
);

await listenFromEnv(app);
