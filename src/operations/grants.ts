/**
 * Credit grants (contract "Credit grants"), the grants API: create, list (per balance in drawing
 * order; per company by expiry), read, PATCH and void, and the grants audit. The rules are
 * domain/grants.ts; how units join a balance and how a grant reads at an instant, the ledger's
 * (src/ledger/grants.ts); a balance's live grants are kept in its row and written by a posting.
 */
import {
  checkInvariant,
  GRANT_EFFECTIVE_AHEAD_MAX_MS,
  GRANT_PRIORITY_DEFAULT,
  GRANT_STATUSES,
  type GrantCategory,
  type GrantOutcome,
  type GrantStatus,
  type Lots,
  patchGrant as patchLots,
  type Step,
  voidGrant as voidLots,
} from '../domain/grants.js';
import { metadataViolation } from '../domain/metadata.js';
import { fail, OutcomeError } from '../domain/outcome.js';
import { parseRfc3339 } from '../domain/time.js';
import { formatDecimal, parseDecimal } from '../lib/decimal.js';
import { balanceKey } from '../lib/keys.js';
import { lotsOf } from '../ledger/entries.js';
import { type GrantSpec, type GrantView, grantEntry, grantViewOf, headroom } from '../ledger/grants.js';
import type { AuditViolation, BalanceKey, GrantRow, Page, PageResult, ReadTx, Tx } from '../store/types.js';
import type { Command, Deps } from './deps.js';
import { ownedAccount, unknownCursor } from './lookups.js';

// ---------------------------------------------------------------------------------------------
// Reading grants

/** Views of rows of several balances, each overlaid with its balance as it is at `nowMs`. */
async function viewsOf(deps: Deps, tx: ReadTx, rows: GrantRow[], nowMs: number): Promise<GrantView[]> {
  const lots = await deps.ledger.viewGrants(tx, [...new Set(rows.map((r) => r.accountId))], nowMs);
  return rows.map((r) => grantViewOf(r, lots.get(balanceKey(r.accountId, r.denomination)), nowMs));
}

const DEFAULT_STATUSES: readonly GrantStatus[] = ['scheduled', 'active'];

/** `status=` as a list (comma-separated; default scheduled,active). */
export function parseStatuses(text: string | undefined): GrantStatus[] {
  if (text === undefined || text.trim() === '') return [...DEFAULT_STATUSES];
  const out: GrantStatus[] = [];
  for (const part of text.split(',')) {
    const s = part.trim();
    if (!(GRANT_STATUSES as readonly string[]).includes(s))
      fail('unknown_grant_status', `unknown status "${s}": use ${GRANT_STATUSES.join(', ')}`, 'status');
    if (!out.includes(s as GrantStatus)) out.push(s as GrantStatus);
  }
  return out;
}

function instant(text: string | undefined, param: string): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseRfc3339(text);
  if (ms === null) fail('invalid_timestamp', `${param} must be an RFC 3339 date-time`, param);
  return ms;
}

/** The grants of the company's account's balance as they are at `nowMs` (a view), or 404. */
async function ownedBalanceGrants(
  deps: Deps,
  tx: ReadTx,
  companyId: string,
  accountId: string,
  denomination: string,
  nowMs: number,
): Promise<Pick<Lots, 'grants'>> {
  await ownedAccount(tx, companyId, accountId);
  const b = (await deps.ledger.viewGrants(tx, [accountId], nowMs)).get(balanceKey(accountId, denomination));
  if (!b) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
  return b;
}

/** A balance's grants of `status`, in drawing order, paged by grant id. */
export async function listBalanceGrants(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
  status: string | undefined,
  page: Page,
): Promise<PageResult<GrantView>> {
  const statuses = parseStatuses(status);
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    const b = await ownedBalanceGrants(deps, tx, companyId, accountId, denomination, nowMs);
    const rows = await tx.grants.listGrantsOfBalance(accountId, denomination, statuses, nowMs);
    let start = 0;
    if (page.startingAfter !== undefined) {
      const at = rows.findIndex((r) => r.grantId === page.startingAfter);
      if (at < 0) unknownCursor();
      start = at + 1;
    }
    const slice = rows.slice(start, start + page.limit);
    return { rows: slice.map((r) => grantViewOf(r, b, nowMs)), hasMore: start + page.limit < rows.length };
  });
}

export interface GrantListInput {
  account_id?: string;
  denomination?: string;
  category?: GrantCategory;
  status?: string;
  expires_before?: string;
}

/** The company's grants by expiry (never-expiring last), then grant id. */
export async function listGrants(
  deps: Deps,
  companyId: string,
  input: GrantListInput,
  page: Page,
): Promise<PageResult<GrantView>> {
  const statuses = parseStatuses(input.status);
  const expiresBeforeMs = instant(input.expires_before, 'expires_before');
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    if (input.account_id !== undefined) await ownedAccount(tx, companyId, input.account_id);
    const result = await tx.grants.listGrants(
      companyId,
      {
        statuses,
        nowMs,
        ...(input.account_id !== undefined ? { accountId: input.account_id } : {}),
        ...(input.denomination !== undefined ? { denomination: input.denomination } : {}),
        ...(input.category !== undefined ? { category: input.category } : {}),
        ...(expiresBeforeMs !== undefined ? { expiresBeforeMs } : {}),
      },
      page,
    );
    if (!result) unknownCursor();
    return { rows: await viewsOf(deps, tx, result.rows, nowMs), hasMore: result.hasMore };
  });
}

export async function getGrant(deps: Deps, companyId: string, grantId: string): Promise<GrantView> {
  const nowMs = deps.clock.now();
  return deps.store.read(async (tx) => {
    const row = await tx.grants.findGrant(companyId, grantId);
    if (!row) fail('not_found', `no such grant: ${grantId}`, 'grant_id');
    return (await viewsOf(deps, tx, [row], nowMs))[0]!;
  });
}

// ---------------------------------------------------------------------------------------------
// Changing grants

export interface CreateGrantInput {
  amount: number;
  priority?: number;
  category?: GrantCategory;
  effective_at?: string;
  expires_at?: string;
  cost_basis?: string | number;
  name?: string;
  metadata?: Record<string, unknown>;
}

function checkMetadata(metadata: unknown): void {
  const refused = metadata === undefined || metadata === null ? undefined : metadataViolation(metadata, 'metadata');
  if (refused) throw new OutcomeError(refused);
}

/** The body's grant, checked against the contract at `nowMs`. */
function specOf(input: CreateGrantInput, nowMs: number): GrantSpec {
  checkMetadata(input.metadata);
  const effectiveAtMs = instant(input.effective_at, 'effective_at') ?? nowMs;
  if (effectiveAtMs > nowMs + GRANT_EFFECTIVE_AHEAD_MAX_MS)
    fail('effective_at_too_far_ahead', 'effective_at may be at most 366 days ahead', 'effective_at');
  const expiresAtMs = instant(input.expires_at, 'expires_at') ?? null;
  if (expiresAtMs !== null && expiresAtMs <= nowMs)
    fail('expires_at_must_be_in_the_future', 'expires_at must be after now', 'expires_at');
  if (expiresAtMs !== null && expiresAtMs <= effectiveAtMs)
    fail('expires_at_must_be_after_effective_at', 'expires_at must be after effective_at', 'expires_at');
  const category = input.category ?? 'promotional';
  let costBasis: string | null = null;
  if (input.cost_basis !== undefined) {
    if (category !== 'paid')
      fail('cost_basis_only_on_paid_grants', 'cost_basis is given only with category "paid"', 'cost_basis');
    const d = parseDecimal(String(input.cost_basis));
    if (d === null)
      fail('cost_basis_must_be_a_non_negative_decimal', 'cost_basis must be a decimal string ≥ 0', 'cost_basis');
    costBasis = formatDecimal(d);
  }
  return {
    amount: input.amount,
    source: 'grant',
    priority: input.priority ?? GRANT_PRIORITY_DEFAULT,
    category,
    effectiveAtMs,
    expiresAtMs,
    costBasis,
    name: input.name ?? null,
    metadata: input.metadata ?? null,
  };
}

export async function createGrant(
  deps: Deps,
  companyId: string,
  accountId: string,
  denomination: string,
  input: CreateGrantInput,
): Promise<Command<GrantView>> {
  specOf(input, deps.clock.now());
  return async (tx) => {
    const nowMs = deps.clock.now();
    const spec = specOf(input, nowMs);
    await ownedAccount(tx, companyId, accountId);
    const p = await deps.ledger.open(tx, [{ accountId, denomination }], nowMs);
    const b = p.balance(accountId, denomination);
    if (!b) fail('not_found', `the account has no balance of denomination "${denomination}"`, 'denomination');
    if (spec.amount > headroom(b))
      fail('amount_out_of_range', 'the grant would take the balance beyond the exact integer range', 'amount');
    const entry = grantEntry(b, spec, nowMs, 'grant');
    const after = (await p.post([entry])).balances.get(balanceKey(accountId, denomination))!;
    // Read back: a grant the debt takes whole is finished at once, its row holding the final figures.
    return grantViewOf((await tx.grants.findGrant(companyId, entry.grant.grantId))!, after, nowMs);
  };
}

/** The domain's answer, or its refusal as the API's. */
function unwrap(o: GrantOutcome<Step>): Step {
  if (!o.ok) {
    if (o.reason === 'not_found') throw new Error('grant missing from its lots');
    fail(o.reason, o.message, o.param);
  }
  return o.value;
}

/** A grant that is no longer live: voided, expired or used up (each answered by its status). */
function finishedRefusal(view: GrantView, allowVoided: boolean): GrantView {
  if (view.status === 'voided' && allowVoided) return view;
  if (view.status === 'voided') fail('grant_voided', 'the grant has been voided');
  if (view.status === 'expired') fail('grant_expired', 'the grant has expired');
  fail('grant_depleted', 'the grant has no remaining units');
}

/**
 * Runs a change of one grant: finds it (404 for another company's), locks its balance with what
 * is due applied, and posts `change` of its lots; a grant no longer in the lots is answered by
 * its status.
 */
async function changeGrant(
  deps: Deps,
  tx: Tx,
  companyId: string,
  grantId: string,
  change: (lots: Lots, nowMs: number) => GrantOutcome<Step>,
  allowVoided: boolean,
  reason: string | null = null,
): Promise<GrantView> {
  const row = await tx.grants.findGrant(companyId, grantId);
  if (!row) fail('not_found', `no such grant: ${grantId}`, 'grant_id');
  // The clock is read once the balance is locked: what another transaction applied meanwhile is in the past.
  const p = await deps.ledger.open(tx, [row], () => deps.clock.now());
  const { nowMs } = p;
  const b = p.balance(row.accountId, row.denomination)!;
  // A grant no longer in the lots is finished (what is due may just have finished it): its row has the final figures.
  if (!b.grants.some((g) => g.grantId === grantId))
    return finishedRefusal(grantViewOf((await tx.grants.findGrant(companyId, grantId))!, b, nowMs), allowVoided);
  const step = unwrap(change(lotsOf(b), nowMs));
  const after = (
    await p.post([{ accountId: row.accountId, denomination: row.denomination, reason, apply: () => step }])
  ).balances.get(balanceKey(row.accountId, row.denomination))!;
  return grantViewOf((await tx.grants.findGrant(companyId, grantId))!, after, nowMs);
}

export interface PatchGrantInput {
  priority?: number;
  expires_at?: string | null;
  name?: string | null;
  metadata?: Record<string, unknown> | null;
}

export async function patchGrant(
  deps: Deps,
  companyId: string,
  grantId: string,
  input: PatchGrantInput,
): Promise<Command<GrantView>> {
  const expiresAtMs = input.expires_at === null ? null : instant(input.expires_at, 'expires_at');
  checkMetadata(input.metadata);
  return async (tx) => {
    const patch: { priority?: number; expiresAtMs?: number | null } = {};
    if (input.priority !== undefined) patch.priority = input.priority;
    if (expiresAtMs !== undefined) patch.expiresAtMs = expiresAtMs;
    const view = await changeGrant(deps, tx, companyId, grantId, (l, now) => patchLots(l, grantId, patch, now), false);
    if (input.name === undefined && input.metadata === undefined) return view;
    const name = input.name === undefined ? view.name : input.name;
    const metadata = input.metadata === undefined ? view.metadata : input.metadata;
    await tx.grants.describeGrant(grantId, name, metadata);
    return { ...view, name, metadata };
  };
}

export async function voidGrant(
  deps: Deps,
  companyId: string,
  grantId: string,
  input: { reason?: string },
): Promise<Command<GrantView>> {
  return async (tx) =>
    changeGrant(deps, tx, companyId, grantId, (l, now) => voidLots(l, grantId, now), true, input.reason ?? null);
}

// ---------------------------------------------------------------------------------------------
// The audit

/** Balances one audit step reads. */
const AUDIT_BATCH = 1000;

/**
 * The grants invariant of every balance (domain checkInvariant: amount = Σ remaining − debt, 0 ≤
 * held ≤ remaining ≤ amount per grant, pending ≥ Σ held, …), and that each grant's `held` is
 * exactly what the pending events say they hold of it. `billing audit` and the test harness run it.
 */
export async function auditGrants(tx: ReadTx): Promise<AuditViolation[]> {
  const out: AuditViolation[] = [];
  let after: BalanceKey | undefined;
  for (;;) {
    const batch = await tx.balances.scanBalances(after, AUDIT_BATCH);
    if (batch.length === 0) return out;
    after = batch[batch.length - 1]!;
    const holding = batch.filter((b) => b.pending !== 0 || b.grants.some((g) => g.held !== 0));
    const heldBy = new Map<string, number>();
    for (const h of await tx.events.listPendingHolds(holding))
      for (const a of h.heldFrom ?? []) {
        const key = `${balanceKey(h.accountId, h.denomination)}\u0000${a.grantId}`;
        heldBy.set(key, (heldBy.get(key) ?? 0) + a.amount);
      }
    for (const b of batch) {
      const problems = checkInvariant(lotsOf(b));
      for (const g of b.grants) {
        const held = heldBy.get(`${balanceKey(b.accountId, b.denomination)}\u0000${g.grantId}`) ?? 0;
        if (held !== g.held) problems.push(`grant ${g.grantId}: held ${g.held}, pending events hold ${held} of it`);
      }
      for (const problem of problems) out.push({ accountId: b.accountId, denomination: b.denomination, problem });
    }
  }
}
