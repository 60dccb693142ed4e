/**
 * The ingest path's batch writes as single statements (arrays unnested server-side), built from
 * rows: events, ledger transactions, balance deltas, usage rollups, and all of them at once
 * (`writeLedger`). One file for the aggregates they write because `writeLedger` composes the
 * others into one statement. Also measured by bench/pg-rows.ts.
 */
import { balanceKey } from '../../lib/keys.js';
import type { BalanceDelta } from '../balances/types.js';
import { EVENT_COLUMNS } from '../events/sql.js';
import { encodeAllocations } from '../grants/sql.js';
import { columnsAfter, type WrittenLots, writtenLots } from '../balances/sql.js';
import type { EventRow } from '../events/types.js';
import { drawnUnits, TRANSACTION_COLUMNS } from '../transactions/sql.js';
import type { TransactionRow } from '../transactions/types.js';
import { companyUsage } from '../usage/sql.js';
import type { UsageRow } from '../usage/types.js';

/**
 * A NOT NULL column of a batch as `[array, scalar]`. When every row holds the same value (the
 * company, the event type, the state, the time of a group: most columns of most groups), the
 * array is empty and the value goes once, as the scalar: `unnest` pads a shorter array with NULL,
 * and `COALESCE(column, scalar)` reads the scalar there. Otherwise the array is whole and the
 * scalar NULL; a NOT NULL column holds no NULL element, so COALESCE never picks the scalar then.
 * Each array element costs PostgreSQL a parse (array_in) and this process a serialisation: for
 * a 100-event insert, most of them were copies of one value.
 */
function columnOf<T>(values: T[]): [T[], T | null] {
  const first = values[0];
  for (let i = 1; i < values.length; i++) if (values[i] !== first) return [values, null];
  return first === undefined ? [values, null] : [[], first];
}
/** A nullable column: all NULL goes as the empty array (unnest pads it with NULL). */
function nullableColumnOf<T>(values: (T | null)[]): (T | null)[] {
  return values.every((v) => v === null) ? [] : values;
}
/**
 * A nullable column as `[array, scalar]` read with `COALESCE(column, scalar)`: one value in every
 * row goes once (NULL included: the empty array and a NULL scalar); otherwise the whole array,
 * its NULL elements kept, since the scalar is NULL then.
 */
function sharedNullableColumnOf<T>(values: (T | null)[]): [(T | null)[], T | null] {
  const first = values[0];
  for (let i = 1; i < values.length; i++) if (values[i] !== first) return [values, null];
  return [[], first ?? null];
}

/**
 * One multi-row insert of events (also measured by bench/pg-rows.ts). `event_id` is always a
 * whole array: it sets the number of rows.
 */
export function insertEventsStatement(rows: EventRow[]): [string, unknown[]] {
  const [companies, company] = columnOf(rows.map((e) => e.companyId));
  const [accounts, account] = columnOf(rows.map((e) => e.accountId));
  const [supplied, clientSupplied] = columnOf(rows.map((e) => e.clientSupplied));
  const [types, type] = columnOf(rows.map((e) => e.type));
  const [quantities, quantity] = columnOf(rows.map((e) => e.quantity));
  const [costs, cost] = columnOf(rows.map((e) => e.costAmount));
  const [denominations, denomination] = columnOf(rows.map((e) => e.denomination));
  const [states, state] = columnOf(rows.map((e) => e.state));
  const [occurred, occurredAt] = columnOf(rows.map((e) => e.occurredAtMs));
  const [created, createdAt] = columnOf(rows.map((e) => e.createdAtMs));
  const [updated, updatedAt] = columnOf(rows.map((e) => e.updatedAtMs));
  const [models, model] = columnOf(rows.map((e) => e.priceModel));
  return [
    `INSERT INTO events (${EVENT_COLUMNS})
     SELECT COALESCE(u.company_id, ?::text), u.event_id, COALESCE(u.account_id, ?::text), ` +
      `COALESCE(u.client_supplied, ?::boolean),
       COALESCE(u.type, ?::text), COALESCE(u.quantity, ?::float8), COALESCE(u.cost_amount, ?::bigint), ` +
      `COALESCE(u.denomination, ?::text),
       u.metadata, COALESCE(u.state, ?::text), u.content_hash, COALESCE(u.occurred_at, ?::bigint), ` +
      `COALESCE(u.created_at, ?::bigint), COALESCE(u.updated_at, ?::bigint), u.expires_at, ` +
      `COALESCE(u.price_model, ?::text), u.held_from, u.lease_id
     FROM unnest(?::text[], ?::text[], ?::text[], ?::boolean[], ?::text[], ?::float8[], ?::bigint[], ?::text[], ` +
      `?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ` +
      `?::text[])
       AS u(company_id, event_id, account_id, client_supplied, type, quantity, cost_amount, denomination, metadata, ` +
      `state, content_hash, occurred_at, created_at, updated_at, expires_at, price_model, held_from, lease_id)`,
    [
      company,
      account,
      clientSupplied,
      type,
      quantity,
      cost,
      denomination,
      state,
      occurredAt,
      createdAt,
      updatedAt,
      model,
      companies,
      rows.map((e) => e.eventId),
      accounts,
      supplied,
      types,
      quantities,
      costs,
      denominations,
      nullableColumnOf(rows.map((e) => (e.metadata === null ? null : JSON.stringify(e.metadata)))),
      states,
      nullableColumnOf(rows.map((e) => e.contentHash)),
      occurred,
      created,
      updated,
      nullableColumnOf(rows.map((e) => e.expiresAtMs)),
      models,
      nullableColumnOf(rows.map((e) => encodeAllocations(e.heldFrom))),
      nullableColumnOf(rows.map((e) => e.leaseId)),
    ],
  ];
}

/**
 * One multi-row insert of ledger rows (also measured by bench/pg-rows.ts). `transaction_id` is
 * always a whole array: it sets the number of rows.
 */
export function insertTransactionsStatement(rows: TransactionRow[]): [string, unknown[]] {
  const [accounts, account] = columnOf(rows.map((t) => t.accountId));
  const [denominations, denomination] = columnOf(rows.map((t) => t.denomination));
  const [amounts, amount] = columnOf(rows.map((t) => t.amount));
  const [kinds, kind] = columnOf(rows.map((t) => t.kind));
  const [created, createdAt] = columnOf(rows.map((t) => t.createdAtMs));
  const [drawn, drawnFrom] = sharedNullableColumnOf(
    rows.map((t) => encodeAllocations(t.drawnFrom, drawnUnits(t.amount))),
  );
  // WITH ORDINALITY … ORDER BY keeps `seq` in request order, which the balance_after chain relies on.
  return [
    `INSERT INTO transactions (${TRANSACTION_COLUMNS})
     SELECT t.transaction_id, COALESCE(t.account_id, ?::text), COALESCE(t.denomination, ?::text), ` +
      `COALESCE(t.amount, ?::bigint), t.balance_after,
       COALESCE(t.kind, ?::text), t.event_id, t.reason, COALESCE(t.created_at, ?::bigint), t.grant_id, ` +
      `COALESCE(t.drawn_from, ?::text)
     FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[], ` +
      `?::bigint[], ?::text[], ?::text[])
       WITH ORDINALITY AS t(transaction_id, account_id, denomination, amount, balance_after, kind, event_id, reason, ` +
      `created_at, grant_id, drawn_from, n)
     ORDER BY t.n`,
    [
      account,
      denomination,
      amount,
      kind,
      createdAt,
      drawnFrom,
      rows.map((t) => t.transactionId),
      accounts,
      denominations,
      amounts,
      rows.map((t) => t.balanceAfter),
      kinds,
      nullableColumnOf(rows.map((t) => t.eventId)),
      nullableColumnOf(rows.map((t) => t.reason)),
      created,
      nullableColumnOf(rows.map((t) => t.grantId)),
      drawn,
    ],
  ];
}

/**
 * `UPDATE … FROM` applies only one of several source rows matching the same target row: the
 * deltas are summed per balance first so that none is silently dropped.
 */
export function summedDeltas(input: BalanceDelta[]): BalanceDelta[] {
  const byKey = new Map<string, BalanceDelta>();
  for (const d of input) {
    const k = balanceKey(d.accountId, d.denomination);
    const sum = byKey.get(k);
    if (sum) {
      sum.amount += d.amount;
      sum.pending += d.pending;
      if (d.grants !== undefined) {
        sum.grants = d.grants;
        sum.grantsDueAtMs = d.grantsDueAtMs ?? null;
      }
      if (d.spend !== undefined) sum.spend = d.spend;
      if (d.from === undefined) sum.from = undefined;
    } else byKey.set(k, { ...d });
  }
  return [...byKey.values()];
}

/**
 * `amount = amount + Δ, pending = pending + Δ` for each balance, with its live grants as they are
 * after (NULL: the stored grants stay, storedLotsOf), returning the rows after: without their
 * grants text where every delta gives its grants (the caller knows the text, columnsAfter).
 */
export function applyBalanceDeltasSql(deltas: readonly BalanceDelta[]): string {
  return `UPDATE balances b
       SET amount = b.amount + d.amount, pending = b.pending + d.pending,
       grants = COALESCE(d.grants, b.grants),
       grants_due_at = CASE WHEN d.grants IS NULL THEN b.grants_due_at ELSE d.grants_due_at END,
       spend_day_start = COALESCE(d.spend_day_start, b.spend_day_start), spend_day = COALESCE(d.spend_day, b.spend_day),
       spend_month_start = COALESCE(d.spend_month_start, b.spend_month_start),
       spend_month = COALESCE(d.spend_month, b.spend_month)
       FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[],
         ?::bigint[], ?::bigint[])
         AS d(account_id, denomination, amount, pending, grants, grants_due_at, spend_day_start, spend_day,
           spend_month_start, spend_month)
       WHERE b.account_id = d.account_id AND b.denomination = d.denomination RETURNING ${columnsAfter(deltas, 'b.')}`;
}
/** The parameters of applyBalanceDeltasSql for deltas summed per balance (summedDeltas), given what they write. */
export function balanceDeltaParams(deltas: BalanceDelta[], written: WrittenLots): unknown[] {
  const stored = (d: BalanceDelta) => {
    const s = written.get(balanceKey(d.accountId, d.denomination))?.stored;
    return s?.written ? s.text : null;
  };
  return [
    deltas.map((d) => d.accountId),
    deltas.map((d) => d.denomination),
    deltas.map((d) => d.amount),
    deltas.map((d) => d.pending),
    deltas.map(stored),
    deltas.map((d) => d.grantsDueAtMs ?? null),
    deltas.map((d) => d.spend?.dayStartMs ?? null),
    deltas.map((d) => d.spend?.day ?? null),
    deltas.map((d) => d.spend?.monthStartMs ?? null),
    deltas.map((d) => d.spend?.month ?? null),
  ];
}

/**
 * Rows per company, hour, denomination and type in the company-wide rollup: concurrent group
 * commits of one company write different rows (a random shard per statement) instead of
 * queueing on one; reads add the shards up.
 */
export const USAGE_COMPANY_SHARDS = 8;

const USAGE_UPDATE = (table: string) =>
  `DO UPDATE SET events = ${table}.events + excluded.events, quantity = ${table}.quantity + excluded.quantity, ` +
  `cost = ${table}.cost + excluded.cost`;

/**
 * Both rollup upserts (per account; per company, in `shard`) from a group's usage rows, which
 * name distinct keys in key order: ON CONFLICT may touch a row once per statement, and rows are
 * locked in the order given (WITH ORDINALITY … ORDER BY), the same order in every writer.
 */
export function addUsageStatements(rows: UsageRow[], shard: number): [[string, unknown[]], [string, unknown[]]] {
  const [companies, company] = columnOf(rows.map((r) => r.companyId));
  const [hours, hour] = columnOf(rows.map((r) => r.hourMs));
  const accountSql =
    'INSERT INTO usage_hours (account_id, hour, denomination, type, company_id, events, quantity, cost) ' +
    'SELECT u.account_id, COALESCE(u.hour, ?::bigint), u.denomination, u.type, COALESCE(u.company_id, ?::text), ' +
    'u.events, u.quantity, u.cost ' +
    'FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::numeric[], ?::bigint[]) ' +
    'WITH ORDINALITY AS u(account_id, hour, denomination, type, company_id, events, quantity, cost, n) ORDER BY u.n ' +
    `ON CONFLICT (account_id, hour, denomination, type) ${USAGE_UPDATE('usage_hours')}`;
  const accountParams = [
    hour,
    company,
    rows.map((r) => r.accountId),
    hours,
    rows.map((r) => r.denomination),
    rows.map((r) => r.type),
    companies,
    rows.map((r) => r.events),
    rows.map((r) => r.quantity),
    rows.map((r) => r.cost),
  ];
  const totals = companyUsage(rows);
  const companySql =
    'INSERT INTO usage_company_hours (company_id, hour, denomination, type, shard, events, quantity, cost) ' +
    'SELECT u.company_id, u.hour, u.denomination, u.type, ?::integer, u.events, u.quantity, u.cost ' +
    'FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::numeric[], ?::bigint[]) ' +
    'WITH ORDINALITY AS u(company_id, hour, denomination, type, events, quantity, cost, n) ORDER BY u.n ' +
    `ON CONFLICT (company_id, hour, denomination, type, shard) ${USAGE_UPDATE('usage_company_hours')}`;
  const companyParams = [
    shard,
    totals.map((r) => r.companyId),
    totals.map((r) => r.hourMs),
    totals.map((r) => r.denomination),
    totals.map((r) => r.type),
    totals.map((r) => r.events),
    totals.map((r) => r.quantity),
    totals.map((r) => r.cost),
  ];
  return [
    [accountSql, accountParams],
    [companySql, companyParams],
  ];
}

/**
 * Events, balance deltas and ledger rows in one statement (PgTx.writeLedger; also measured by
 * bench/pg-rows.ts). The parts write different tables, so their order inside the statement
 * does not matter; the ledger rows keep their order by `seq` as in insertTransactionsStatement.
 * `deltas` are summed per balance (summedDeltas); `written`, what they write (writtenLots).
 */
export function writeLedgerStatement(
  events: EventRow[],
  deltas: BalanceDelta[],
  transactions: TransactionRow[],
  usage: UsageRow[] = [],
  shard = 0,
  written: WrittenLots = writtenLots(deltas),
): [string, unknown[]] {
  const [eventsSql, eventsParams] = insertEventsStatement(events);
  const [transactionsSql, transactionsParams] = insertTransactionsStatement(transactions);
  let usageSql = '';
  const usageParams: unknown[] = [];
  if (usage.length > 0) {
    const [[accountSql, accountParams], [companySql, companyParams]] = addUsageStatements(usage, shard);
    usageSql = `u AS (${accountSql}), uc AS (${companySql}),`;
    usageParams.push(...accountParams, ...companyParams);
  }
  return [
    `WITH e AS (${eventsSql}),
     t AS (${transactionsSql}), ${usageSql}
     changed AS (${applyBalanceDeltasSql(deltas)})
     SELECT * FROM changed`,
    [...eventsParams, ...transactionsParams, ...usageParams, ...balanceDeltaParams(deltas, written)],
  ];
}
