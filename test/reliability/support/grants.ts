/**
 * Credit grants in the reliability suite: the grants API through a (child) server, and the judge of every grant of a
 * company read three ways after a run:
 *
 * - the store (each balance row's live lots, `balances.grants`): domain/grants.ts `checkInvariant` at `nowMs`
 *   (amount = Σ remaining over opened grants − debt, debt ≥ 0; 0 ≤ held ≤ remaining ≤ amount; pending ≥ Σ held;
 *   no start or expiry due at `nowMs` left unapplied);
 * - the API (`GET …/balance/{d}` and `GET …/balance/{d}/grants?status=<all>`, every page): the same invariant on
 *   what a client sees, and the same figures as the store;
 * - the ledger, per grant: at most one opening transaction (+amount); at most one closing transaction at its
 *   instant (`grant_expiry` at or after `expires_at`, or `grant_void` at `voided_at`, never both kinds), plus at most
 *   one per event that held units of it and settled after it closed (never more than it held); nothing drawn from it
 *   at or after its expires_at (by time) or after its void (in ledger order) except units an event held before; and
 *   its units conserved: amount = Σ drawn_from + Σ |closing transactions| + remaining. A closing applied twice,
 *   lost, or applied to units it should not have touched breaks one of these.
 *
 * The conservation line assumes no debt (units added while the balance owes repay the debt without a transaction
 * naming the grant): scenarios keep every balance positive, and a balance that went below 0 is reported.
 */
import type http from 'node:http';
import { checkInvariant } from '../../../src/domain/grants.js';
import { decodeAllocations } from '../../../src/store/grants/sql.js';
import { drawnUnits } from '../../../src/store/transactions/sql.js';
import { openStore } from '../../../src/store/open.js';
import type { BalanceRow } from '../../../src/store/types.js';
import type { TestDatabase } from '../../cli/support.js';
import { type Answer, send } from './http.js';
import { portOf } from '../../../src/ledger/port.js';

export const ALL_STATUSES = 'scheduled,active,depleted,expired,voided';

export interface GrantJson {
  grant_id: string;
  account_id: string;
  denomination: string;
  amount: number;
  remaining: number;
  held: number;
  priority: number;
  source: string;
  status: string;
  name: string | null;
  effective_at: string;
  expires_at: string | null;
  voided_at: string | null;
}

export interface BalanceJson {
  amount: number;
  pending: number;
  available: number;
  next_expiry: { expires_at: string; amount: number } | null;
}

export const balanceKey = (accountId: string, denomination: string): string => `${accountId}\u0000${denomination}`;

/** Every grant of one balance through the API (all statuses, every page), or the answer that refused. */
export async function listBalanceGrants(
  url: string,
  auth: [string, string],
  accountId: string,
  denomination: string,
  agent?: http.Agent,
): Promise<{ grants: GrantJson[] } | { refused: Answer }> {
  const grants: GrantJson[] = [];
  let cursor: string | null = null;
  for (;;) {
    const after: string = cursor === null ? '' : `&starting_after=${cursor}`;
    const a = await send(
      url,
      {
        method: 'GET',
        path: `/v1/accounts/${accountId}/balance/${denomination}/grants?status=${ALL_STATUSES}&limit=100${after}`,
        auth,
      },
      agent,
    );
    if (a.status !== 200) return { refused: a };
    grants.push(...(a.json.data as GrantJson[]));
    if (!a.json.has_more) return { grants };
    cursor = a.json.next_cursor as string;
  }
}

/** The contract's invariant on one balance as the API shows it (empty: it holds). */
export function apiInvariant(balance: Pick<BalanceJson, 'amount' | 'pending'>, grants: GrantJson[]): string[] {
  const v: string[] = [];
  let remaining = 0;
  let held = 0;
  for (const g of grants) {
    if (!(g.held >= 0 && g.held <= g.remaining && g.remaining <= g.amount))
      v.push(`grant ${g.grant_id} (${g.status}): not 0 ≤ held ${g.held} ≤ remaining ${g.remaining} ≤ ${g.amount}`);
    // A scheduled grant's units are not on the balance yet (a voided one that never opened shows remaining 0).
    if (g.status !== 'scheduled') remaining += g.remaining;
    held += g.held;
  }
  const debt = remaining - balance.amount;
  if (debt < 0) v.push(`amount ${balance.amount} exceeds Σ remaining ${remaining} (debt ${debt} < 0)`);
  if (debt > 0)
    for (const g of grants)
      if (g.status === 'active' && g.remaining > g.held)
        v.push(`grant ${g.grant_id} has unheld units while the balance owes ${debt}`);
  if (balance.pending < held) v.push(`pending ${balance.pending} < Σ held ${held}`);
  return v;
}

/** The balance rows of these accounts, read from the store directly (their live lots decoded). */
export async function storeBalances(db: TestDatabase, accountIds: string[]): Promise<BalanceRow[]> {
  const store = await openStore(db.url, { pgPoolSize: 2 });
  try {
    const out: BalanceRow[] = [];
    for (let i = 0; i < accountIds.length; i += 200)
      out.push(...(await store.read((tx) => portOf(tx).listBalancesOfAccounts(accountIds.slice(i, i + 200)))));
    return out;
  } finally {
    await store.close();
  }
}

/** checkInvariant on every balance row's lots at `nowMs` (empty: it holds everywhere). */
export function storeInvariant(balances: BalanceRow[], nowMs: number): string[] {
  const v: string[] = [];
  for (const b of balances)
    for (const p of checkInvariant({ amount: b.amount, pending: b.pending, grants: b.grants }, nowMs))
      v.push(`${b.accountId} ${b.denomination}: ${p}`);
  return v;
}

/** The API's view of every balance matches the store's lots and keeps the invariant; returns the problems. */
export async function apiMatchesStore(
  db: TestDatabase,
  url: string,
  auth: [string, string],
  balances: BalanceRow[],
  nowMs: number,
  agent?: http.Agent,
): Promise<string[]> {
  const v: string[] = [];
  const rows = await grantRowsOf(db, balances);
  let next = 0;
  const one = async (b: BalanceRow) => {
    const at = `${b.accountId} ${b.denomination}`;
    const ba = await send(
      url,
      { method: 'GET', path: `/v1/accounts/${b.accountId}/balance/${b.denomination}`, auth },
      agent,
    );
    if (ba.status !== 200) {
      v.push(`${at}: GET balance ${ba.status} ${ba.text.slice(0, 200)}`);
      return;
    }
    const listed = await listBalanceGrants(url, auth, b.accountId, b.denomination, agent);
    if ('refused' in listed) {
      v.push(`${at}: GET grants ${listed.refused.status} ${listed.refused.text.slice(0, 200)}`);
      return;
    }
    const balance = ba.json.data as BalanceJson;
    if (balance.amount !== b.amount || balance.pending !== b.pending)
      v.push(`${at}: the API says ${balance.amount}/${balance.pending}, the store ${b.amount}/${b.pending}`);
    for (const p of apiInvariant(balance, listed.grants)) v.push(`${at} (API): ${p}`);
    const lots = new Map(b.grants.map((g) => [g.grantId, g]));
    const mine = rows.get(balanceKey(b.accountId, b.denomination)) ?? [];
    if (mine.length !== listed.grants.length)
      v.push(`${at}: the API lists ${listed.grants.length} grants, the store holds ${mine.length}`);
    for (const g of listed.grants) {
      const lot = lots.get(g.grant_id);
      const row = mine.find((r) => r.grantId === g.grant_id);
      const figures = lot ?? row;
      if (figures === undefined) {
        v.push(`${at}: the API lists ${g.grant_id}, the store has no such grant`);
        continue;
      }
      if (g.remaining !== figures.remaining || g.held !== figures.held)
        v.push(
          `${at}: ${g.grant_id} is ${g.remaining}/${g.held} in the API, ${figures.remaining}/${figures.held} stored`,
        );
      const expiresAtMs = g.expires_at === null ? null : Date.parse(g.expires_at);
      if (g.voided_at === null && expiresAtMs !== null && expiresAtMs <= nowMs && g.status !== 'expired')
        v.push(`${at}: ${g.grant_id} expired at ${g.expires_at}, the API says ${g.status}`);
      if (g.voided_at !== null && g.status !== 'voided')
        v.push(`${at}: ${g.grant_id} voided, the API says ${g.status}`);
    }
  };
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < balances.length) await one(balances[next++]!);
    }),
  );
  return v;
}

/** One grant's stored row (its final figures once it left its balance's lots). */
export interface GrantRowLite {
  grantId: string;
  accountId: string;
  denomination: string;
  amount: number;
  remaining: number;
  held: number;
  name: string | null;
  effectiveAtMs: number;
  expiresAtMs: number | null;
  voidedAtMs: number | null;
}

async function grantRowsOf(db: TestDatabase, balances: BalanceRow[]): Promise<Map<string, GrantRowLite[]>> {
  const out = new Map<string, GrantRowLite[]>();
  if (balances.length === 0) return out;
  for (const g of await grantRows(db, balances[0]!.companyId)) {
    const key = balanceKey(g.accountId, g.denomination);
    out.set(key, [...(out.get(key) ?? []), g]);
  }
  return out;
}

/** The grant rows of a company (of one account, when given). */
export async function grantRows(db: TestDatabase, companyId: string, accountId?: string): Promise<GrantRowLite[]> {
  const rows = await db.sql(
    'SELECT grant_id, account_id, denomination, amount, remaining, held, name, effective_at, expires_at, voided_at ' +
      `FROM grants WHERE company_id = ?${accountId === undefined ? '' : ' AND account_id = ?'}`,
    accountId === undefined ? [companyId] : [companyId, accountId],
  );
  return rows.map((r) => ({
    grantId: String(r.grant_id),
    accountId: String(r.account_id),
    denomination: String(r.denomination),
    amount: Number(r.amount),
    remaining: Number(r.remaining),
    held: Number(r.held),
    name: r.name === null ? null : String(r.name),
    effectiveAtMs: Number(r.effective_at),
    expiresAtMs: r.expires_at === null ? null : Number(r.expires_at),
    voidedAtMs: r.voided_at === null ? null : Number(r.voided_at),
  }));
}

/** One ledger row, as the grant audit reads it. */
export interface TxLite {
  seq: number;
  accountId: string;
  denomination: string;
  amount: number;
  balanceAfter: number;
  kind: string;
  eventId: string | null;
  grantId: string | null;
  drawnFrom: [string, number][] | null;
  createdAtMs: number;
}

/** Every transaction of the company's accounts, in ledger order. */
export async function companyTransactions(db: TestDatabase, companyId: string): Promise<TxLite[]> {
  const rows = await db.sql(
    'SELECT t.seq, t.account_id, t.denomination, t.amount, t.balance_after, t.kind, t.event_id, t.grant_id, ' +
      't.drawn_from, t.created_at FROM transactions t JOIN accounts a ON a.account_id = t.account_id ' +
      'WHERE a.company_id = ? ORDER BY t.seq',
    [companyId],
  );
  return rows.map((r) => ({
    seq: Number(r.seq),
    accountId: String(r.account_id),
    denomination: String(r.denomination),
    amount: Number(r.amount),
    balanceAfter: Number(r.balance_after),
    kind: String(r.kind),
    eventId: r.event_id === null ? null : String(r.event_id),
    grantId: r.grant_id === null ? null : String(r.grant_id),
    // Read with the store's own codec: a whole draw from one grant is stored as its id alone.
    drawnFrom:
      decodeAllocations(r.drawn_from, drawnUnits(Number(r.amount)))?.map(
        (a) => [a.grantId, a.amount] as [string, number],
      ) ?? null,
    createdAtMs: Number(r.created_at),
  }));
}

export interface GrantLedgerFigures {
  grants: number;
  opened: number;
  /** Closings at the grant's instant (its expiry, its void). */
  expiredAtInstant: number;
  voidedAtInstant: number;
  /** Closings of units given back by a settle or cancel after the grant closed. */
  expiredAtSettle: number;
  voidedAtSettle: number;
  /** Grants whose expires_at has passed at `nowMs`. */
  expiredGrants: number;
  voidedGrants: number;
}

export interface GrantLedger {
  problems: string[];
  figures: GrantLedgerFigures;
  /** Per grant: its row, its opening, its closings and the units drawn from it. */
  byGrant: Map<string, { row: GrantRowLite; opening: TxLite[]; closings: TxLite[]; drawn: number }>;
  transactions: TxLite[];
  /**
   * Draws from a grant that come before its void in the ledger, yet carry a later time than the void's: a posting
   * takes its instant before it waits for the balance's lock, so a void stamped at V can be applied after a draw
   * stamped later. Not a units problem (the ledger order is the truth); reported, not judged.
   */
  inversions: string[];
}

/**
 * The per-grant ledger audit of one company (see the header) against its balance rows (`balances`, read from the
 * store after the run) at `nowMs`.
 */
export async function auditGrantLedger(
  db: TestDatabase,
  companyId: string,
  balances: BalanceRow[],
  nowMs: number,
): Promise<GrantLedger> {
  const problems: string[] = [];
  const rows = await grantRows(db, companyId);
  const txs = await companyTransactions(db, companyId);
  const heldFrom = new Map<string, Map<string, number>>();
  for (const r of await db.sql(
    'SELECT event_id, held_from FROM events WHERE company_id = ? AND held_from IS NOT NULL',
    [companyId],
  )) {
    const m = new Map<string, number>();
    for (const [g, n] of JSON.parse(String(r.held_from)) as [string, number][]) m.set(g, n);
    heldFrom.set(String(r.event_id), m);
  }
  const lots = new Map<string, BalanceRow['grants'][number]>();
  for (const b of balances) for (const g of b.grants) lots.set(g.grantId, g);

  const byGrant: GrantLedger['byGrant'] = new Map(
    rows.map((row) => [row.grantId, { row, opening: [], closings: [], drawn: 0 }]),
  );
  const negative = new Set<string>();
  for (const t of txs) {
    if (t.balanceAfter < 0) negative.add(`${t.accountId} ${t.denomination}`);
    if (t.grantId === null) continue;
    const g = byGrant.get(t.grantId);
    if (g === undefined) problems.push(`transaction ${t.seq} (${t.kind}) names unknown grant ${t.grantId}`);
    else if (t.kind === 'grant_expiry' || t.kind === 'grant_void') g.closings.push(t);
    else g.opening.push(t);
  }
  // Nothing is drawn from a grant at or after its expires_at (each posting applies the expiries due at its instant
  // first), nor after its void in ledger order; only units an event held before may still be used (its settle).
  const inversions: string[] = [];
  for (const t of txs)
    for (const [grantId, n] of t.drawnFrom ?? []) {
      const g = byGrant.get(grantId);
      if (g === undefined) {
        problems.push(`transaction ${t.seq} draws from unknown grant ${grantId}`);
        continue;
      }
      g.drawn += n;
      const heldBefore = t.eventId === null ? undefined : heldFrom.get(t.eventId)?.get(grantId);
      if (heldBefore !== undefined && n <= heldBefore) continue;
      const drew = `transaction ${t.seq} (${t.kind}, event ${t.eventId}) drew ${n} from ${grantId} at ${t.createdAtMs}`;
      const expiresAtMs = lots.get(grantId)?.expiresAtMs ?? g.row.expiresAtMs;
      if (expiresAtMs !== null && t.createdAtMs >= expiresAtMs)
        problems.push(`${drew}, at or after its expires_at ${expiresAtMs} (held by the event: ${heldBefore ?? 0})`);
      const closing = g.closings.find((c) => c.eventId === null);
      if (closing !== undefined && t.seq > closing.seq)
        problems.push(`${drew}, after its ${closing.kind} (transaction ${closing.seq} at ${closing.createdAtMs})`);
      else if (closing?.kind === 'grant_void' && t.createdAtMs >= closing.createdAtMs)
        inversions.push(`${drew}, before its grant_void (transaction ${closing.seq}) stamped ${closing.createdAtMs}`);
    }
  for (const b of negative) problems.push(`${b} went below 0: debt is outside these scenarios' conservation check`);

  const figures: GrantLedgerFigures = {
    grants: rows.length,
    opened: 0,
    expiredAtInstant: 0,
    voidedAtInstant: 0,
    expiredAtSettle: 0,
    voidedAtSettle: 0,
    expiredGrants: 0,
    voidedGrants: 0,
  };
  for (const [grantId, g] of byGrant) {
    const at = `grant ${grantId} (${g.row.accountId} ${g.row.denomination})`;
    const lot = lots.get(grantId);
    const voidedAtMs = lot?.voidedAtMs ?? g.row.voidedAtMs;
    const expiresAtMs = lot?.expiresAtMs ?? g.row.expiresAtMs;
    const remaining = lot?.remaining ?? g.row.remaining;
    if (voidedAtMs !== null) figures.voidedGrants++;
    else if (expiresAtMs !== null && expiresAtMs <= nowMs) figures.expiredGrants++;
    // Opening: one transaction of +amount once the grant is on the balance.
    if (g.opening.length > 1) problems.push(`${at}: opened ${g.opening.length} times`);
    const opened = g.opening.length > 0;
    if (opened) figures.opened++;
    for (const o of g.opening)
      if (o.amount !== g.row.amount) problems.push(`${at}: opening transaction of ${o.amount}, amount ${g.row.amount}`);
    if (lot !== undefined && lot.opened !== opened)
      problems.push(`${at}: the lots say opened=${lot.opened}, the ledger has ${g.opening.length} opening(s)`);
    if (!opened && g.row.effectiveAtMs <= nowMs && voidedAtMs === null)
      problems.push(`${at}: effective since ${g.row.effectiveAtMs}, never opened`);

    // Closings: one at the grant's instant at most, of the right kind; per settle, at most one per holding event.
    const atInstant = g.closings.filter((t) => t.eventId === null);
    const atSettle = g.closings.filter((t) => t.eventId !== null);
    const kind = voidedAtMs !== null ? 'grant_void' : 'grant_expiry';
    if (atInstant.length > 1)
      problems.push(`${at}: ${atInstant.length} closings at its instant: ${JSON.stringify(atInstant)}`);
    for (const t of g.closings) {
      if (t.kind !== kind)
        problems.push(
          `${at}: ${t.kind} transaction ${t.seq} of ${t.amount} at ${t.createdAtMs} (event ${t.eventId}), yet the ` +
            `grant has voided_at ${voidedAtMs} (expires_at ${expiresAtMs}); its closings: ` +
            g.closings.map((c) => `${c.seq} ${c.kind} ${c.amount} at ${c.createdAtMs} event ${c.eventId}`).join('; '),
        );
      if (t.amount >= 0) problems.push(`${at}: closing transaction ${t.seq} of ${t.amount}`);
    }
    for (const t of atInstant) {
      if (t.kind === 'grant_expiry') {
        figures.expiredAtInstant++;
        if (expiresAtMs === null || t.createdAtMs < expiresAtMs)
          problems.push(`${at}: expired at ${t.createdAtMs}, before its expires_at ${expiresAtMs}`);
      } else {
        figures.voidedAtInstant++;
        if (t.createdAtMs !== voidedAtMs)
          problems.push(`${at}: void posted at ${t.createdAtMs}, voided_at ${voidedAtMs}`);
      }
    }
    const perEvent = new Map<string, number>();
    for (const t of atSettle) {
      if (t.kind === 'grant_expiry') figures.expiredAtSettle++;
      else figures.voidedAtSettle++;
      perEvent.set(t.eventId!, (perEvent.get(t.eventId!) ?? 0) + 1);
      const held = heldFrom.get(t.eventId!)?.get(grantId);
      if (held === undefined)
        problems.push(`${at}: closing ${t.seq} at the settle of ${t.eventId}, which held none of it`);
      else if (-t.amount > held) problems.push(`${at}: closing ${t.seq} of ${t.amount}, the event held ${held}`);
    }
    for (const [e, n] of perEvent) if (n > 1) problems.push(`${at}: closed ${n} times at the settle of ${e}`);

    // Conservation: every unit of an opened grant is remaining, drawn, or closed.
    const closed = g.closings.reduce((s, t) => s - t.amount, 0);
    if (opened && g.row.amount !== g.drawn + closed + remaining)
      problems.push(
        `${at}: amount ${g.row.amount} ≠ drawn ${g.drawn} + closed ${closed} + remaining ${remaining} ` +
          `(closings ${g.closings.map((t) => `${t.kind} ${t.amount} event ${t.eventId}`).join(', ') || 'none'})`,
      );
    if (!opened && (g.drawn !== 0 || closed !== 0))
      problems.push(`${at}: never opened, yet drawn ${g.drawn} and closed ${closed}`);
    // Closed when due: at `nowMs` an expired or voided grant keeps no unheld units.
    const due = voidedAtMs !== null || (expiresAtMs !== null && expiresAtMs <= nowMs);
    const held = lot?.held ?? g.row.held;
    if (due && opened && remaining !== held)
      problems.push(`${at}: closed (${kind}), yet remaining ${remaining} ≠ held ${held}`);
  }
  return { problems, figures, byGrant, transactions: txs, inversions };
}
