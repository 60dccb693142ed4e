/**
 * The SQL both stores share. Statements here are plain SQL that SQLite and PostgreSQL both run
 * (`?` placeholders; the PostgreSQL executor numbers them). Where the dialects differ in
 * what is fast or how rows are locked, sqlite.ts and postgres.ts override the method.
 */
import type {
  AccountPlanRow,
  CardRow,
  ChargeChanges,
  ChargeRow,
  PlanRow,
  RefillSettings,
  AccountRow,
  ApiKeyRow,
  AuditViolation,
  ClaimedOutboxRow,
  BalanceDelta,
  BalanceKey,
  BalanceRow,
  CompanyRow,
  EventKey,
  EventRow,
  EventStateValue,
  IdempotencyRow,
  OutboxRow,
  Page,
  PageResult,
  PriceRow,
  TransactionRow,
  Tx,
  UserRow,
} from './types.js';
import type {
  ClaimedWebhookDelivery,
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookDeliveryUpdate,
  WebhookSubscriptionRow,
  WebhookTarget,
  WebhookType,
} from './types.js';

export type SqlRow = Record<string, unknown>;

/** How a statement reaches the database. */
export interface SqlExec {
  all(sql: string, params?: unknown[]): Promise<SqlRow[]>;
  /** Returns the number of rows changed. */
  run(sql: string, params?: unknown[]): Promise<number>;
}

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const jsonOrNull = (v: unknown): Record<string, unknown> | null =>
  v === null || v === undefined ? null : (JSON.parse(String(v)) as Record<string, unknown>);

export const toUser = (r: SqlRow): UserRow => ({
  id: num(r.id),
  name: String(r.name),
  email: String(r.email),
  passwordHash: String(r.password_hash),
  dateOfBirth: strOrNull(r.date_of_birth),
  emailVerified: Boolean(r.email_verified),
  createdAtMs: num(r.created_at),
});
export const toCompany = (r: SqlRow): CompanyRow => ({
  companyId: String(r.company_id),
  name: String(r.name),
  ownerUserId: num(r.owner_user_id),
  processor: r.processor === 'stripe' ? 'stripe' : 'sandbox',
  processorApiKey: strOrNull(r.processor_api_key),
  createdAtMs: num(r.created_at),
});
export const toApiKey = (r: SqlRow): ApiKeyRow => ({
  keyId: String(r.key_id),
  companyId: String(r.company_id),
  digest: String(r.digest),
  prefix: String(r.prefix),
  createdAtMs: num(r.created_at),
  revokedAtMs: numOrNull(r.revoked_at),
});
export const toAccount = (r: SqlRow): AccountRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  name: strOrNull(r.name),
  email: strOrNull(r.email),
  metadata: jsonOrNull(r.metadata),
  processorId: strOrNull(r.processor_id),
  planId: strOrNull(r.plan_id),
  createdAtMs: num(r.created_at),
});
export const toBalance = (r: SqlRow): BalanceRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  denomination: String(r.denomination),
  amount: num(r.amount),
  pending: num(r.pending),
  refillThreshold: numOrNull(r.refill_threshold),
  refillAmount: numOrNull(r.refill_amount),
  refillUsdAmount: numOrNull(r.refill_usd_amount),
  refillOnDay: strOrNull(r.refill_on_day),
  createdAtMs: num(r.created_at),
  ...moneyFieldsOfBalance(r),
});
export const toPrice = (r: SqlRow): PriceRow => ({
  companyId: String(r.company_id),
  type: String(r.type),
  denomination: String(r.denomination),
  unitAmount: String(r.unit_amount),
  updatedAtMs: num(r.updated_at),
});
export const toEvent = (r: SqlRow): EventRow => ({
  eventId: String(r.event_id),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  clientSupplied: Boolean(r.client_supplied),
  type: String(r.type),
  quantity: num(r.quantity),
  costAmount: num(r.cost_amount),
  denomination: String(r.denomination),
  metadata: jsonOrNull(r.metadata),
  state: String(r.state) as EventStateValue,
  contentHash: strOrNull(r.content_hash),
  createdAtMs: num(r.created_at),
  updatedAtMs: num(r.updated_at),
  expiresAtMs: numOrNull(r.expires_at),
});
export const toTransaction = (r: SqlRow): TransactionRow => ({
  transactionId: String(r.transaction_id),
  accountId: String(r.account_id),
  denomination: String(r.denomination),
  amount: num(r.amount),
  balanceAfter: num(r.balance_after),
  kind: String(r.kind) as TransactionRow['kind'],
  eventId: strOrNull(r.event_id),
  reason: strOrNull(r.reason),
  createdAtMs: num(r.created_at),
});
const toIdempotency = (r: SqlRow): IdempotencyRow => ({
  scope: String(r.scope),
  key: String(r.key),
  requestHash: String(r.request_hash),
  statusCode: numOrNull(r.status_code),
  responseBody: strOrNull(r.response_body),
  createdAtMs: num(r.created_at),
});

const toClaimedOutbox = (r: SqlRow): ClaimedOutboxRow => ({
  outboxId: String(r.outbox_id),
  companyId: String(r.company_id),
  topic: String(r.topic),
  payload: JSON.parse(String(r.payload)) as Record<string, unknown>,
  runAtMs: num(r.run_at),
  createdAtMs: num(r.created_at),
  attempts: num(r.attempts),
  claimedUntilMs: num(r.claimed_until),
});

const json = (v: Record<string, unknown> | null): string | null => (v === null ? null : JSON.stringify(v));

/** `?, ?, …`: n placeholders, for `IN (…)` and multi-row VALUES. */
export const placeholders = (n: number): string => Array(n).fill('?').join(', ');
/** A balance's key in maps: account and denomination (no NUL can occur in either). */
export const balanceKeyOf = (accountId: string, denomination: string): string => `${accountId}\u0000${denomination}`;
/** Each event once, in the order first named. */
export function distinctEventKeys(keys: EventKey[]): EventKey[] {
  return [...new Map(keys.map((k) => [`${k.companyId}\u0000${k.eventId}`, k])).values()];
}

export const EVENT_COLUMNS =
  'company_id, event_id, account_id, client_supplied, type, quantity, cost_amount, denomination, metadata, state, content_hash, created_at, updated_at, expires_at';
/** Appends an event row's parameters, in EVENT_COLUMNS order, to `p` (multi-row INSERTs). */
export function pushEventParams(e: EventRow, bool: (b: boolean) => unknown, p: unknown[]): void {
  p.push(
    e.companyId,
    e.eventId,
    e.accountId,
    bool(e.clientSupplied),
    e.type,
    e.quantity,
    e.costAmount,
    e.denomination,
    json(e.metadata),
    e.state,
    e.contentHash,
    e.createdAtMs,
    e.updatedAtMs,
    e.expiresAtMs,
  );
}
export const TRANSACTION_COLUMNS =
  'transaction_id, account_id, denomination, amount, balance_after, kind, event_id, reason, created_at';
/** Appends a transaction row's parameters, in TRANSACTION_COLUMNS order, to `p`. */
export function pushTransactionParams(t: TransactionRow, p: unknown[]): void {
  p.push(
    t.transactionId,
    t.accountId,
    t.denomination,
    t.amount,
    t.balanceAfter,
    t.kind,
    t.eventId,
    t.reason,
    t.createdAtMs,
  );
}

/** Terms of one UNION ALL (SQLite allows 500 in a compound SELECT). */
const UNION_TERMS_MAX = 200;

export abstract class SqlTx implements Tx {
  constructor(protected readonly db: SqlExec) {}

  /** How the dialect stores a boolean. */
  protected abstract bool(b: boolean): unknown;

  protected async one(sql: string, params: unknown[]): Promise<SqlRow | undefined> {
    return (await this.db.all(sql, params))[0];
  }

  /**
   * `column IN (?, ?, …)` with one parameter per value (SQLite plans `IN (?)` as `= ?`);
   * PostgreSQL's is `column = ANY(?)` with one array parameter, so that the statement's text
   * (and its prepared plan) does not vary with the list's length. Keyset pages use it for their
   * leading key too: see postgres.ts.
   */
  protected inList(column: string, values: readonly string[]): [sql: string, params: unknown[]] {
    return [`${column} IN (${placeholders(values.length)})`, [...values]];
  }

  /** The ORDER BY of a keyset page, newest first (PostgreSQL's names the leading key too). */
  protected seqOrder(_leadingColumn: string): string {
    return 'seq DESC';
  }

  /** The `seq` of the row a cursor names, if it is one of the list's (`where`); else undefined. */
  protected async cursorSeq(
    table: string,
    idColumn: string,
    id: string,
    where: string,
    params: unknown[],
  ): Promise<unknown> {
    return (await this.one(`SELECT seq FROM ${table} WHERE ${idColumn} = ? AND ${where}`, [id, ...params]))?.seq;
  }

  /**
   * Keyset paging on an ever-growing `seq`, newest first, of the rows whose `keys` columns equal
   * the values given (and `extra`, a constant condition); undefined when the cursor is unknown.
   * An index on (key columns…, seq) serves it without a sort. `npm run bench:growth` shows the
   * plans on a million-transaction account.
   */
  protected async pageBySeq<T>(
    table: string,
    idColumn: string,
    keys: [column: string, value: string][],
    page: Page,
    map: (r: SqlRow) => T,
    extra = '',
  ): Promise<PageResult<T> | undefined> {
    const [[leading, leadingValue], ...rest] = keys as [[string, string], ...[string, string][]];
    const [leadingSql, params] = this.inList(leading, [leadingValue]);
    const where = [leadingSql, ...rest.map(([c]) => `${c} = ?`)].join(' AND ') + extra;
    params.push(...rest.map(([, v]) => v));
    let cursorClause = '';
    if (page.startingAfter !== undefined) {
      const seq = await this.cursorSeq(table, idColumn, page.startingAfter, where, params);
      if (seq === undefined) return undefined;
      cursorClause = ' AND seq < ?';
      params.push(seq);
    }
    const rows = await this.db.all(
      `SELECT * FROM ${table} WHERE ${where}${cursorClause} ORDER BY ${this.seqOrder(leading)} LIMIT ?`,
      [...params, page.limit + 1],
    );
    return { rows: rows.slice(0, page.limit).map(map), hasMore: rows.length > page.limit };
  }

  async findUserByEmail(email: string) {
    const r = await this.one('SELECT * FROM users WHERE email = ?', [email]);
    return r && toUser(r);
  }
  async findUserById(id: number) {
    const r = await this.one('SELECT * FROM users WHERE id = ?', [id]);
    return r && toUser(r);
  }
  async findCompany(companyId: string) {
    const r = await this.one('SELECT * FROM companies WHERE company_id = ?', [companyId]);
    return r && toCompany(r);
  }
  async isCompanyMember(companyId: string, userId: number) {
    return (
      (await this.one('SELECT 1 AS x FROM company_members WHERE company_id = ? AND user_id = ?', [
        companyId,
        userId,
      ])) !== undefined
    );
  }
  async findApiKeyByDigest(digest: string) {
    const r = await this.one('SELECT * FROM api_keys WHERE digest = ?', [digest]);
    return r && toApiKey(r);
  }
  async listApiKeys(companyId: string) {
    return (
      await this.db.all('SELECT * FROM api_keys WHERE company_id = ? ORDER BY created_at, key_id', [companyId])
    ).map(toApiKey);
  }
  async findAccount(companyId: string, accountId: string) {
    const r = await this.one('SELECT * FROM accounts WHERE account_id = ? AND company_id = ?', [accountId, companyId]);
    return r && toAccount(r);
  }
  async findAccountOwners(accountIds: string[]) {
    if (accountIds.length === 0) return [];
    const [inIds, params] = this.inList('account_id', accountIds);
    const rows = await this.db.all(`SELECT account_id, company_id FROM accounts WHERE ${inIds}`, params);
    return rows.map((r) => ({ accountId: String(r.account_id), companyId: String(r.company_id) }));
  }
  listAccounts(companyId: string, page: Page) {
    return this.pageBySeq('accounts', 'account_id', [['company_id', companyId]], page, toAccount);
  }
  async findBalance(accountId: string, denomination: string) {
    const r = await this.one('SELECT * FROM balances WHERE account_id = ? AND denomination = ?', [
      accountId,
      denomination,
    ]);
    return r && toBalance(r);
  }
  async listBalances(accountId: string) {
    return (await this.db.all('SELECT * FROM balances WHERE account_id = ? ORDER BY denomination', [accountId])).map(
      toBalance,
    );
  }
  async listBalancesOfAccounts(accountIds: string[]) {
    if (accountIds.length === 0) return [];
    const [inIds, params] = this.inList('account_id', accountIds);
    return (await this.db.all(`SELECT * FROM balances WHERE ${inIds} ORDER BY account_id, denomination`, params)).map(
      toBalance,
    );
  }
  async listPrices(companyId: string, page: Page) {
    const params: unknown[] = [companyId];
    let clause = '';
    if (page.startingAfter !== undefined) {
      if (
        !(await this.one('SELECT 1 AS x FROM prices WHERE company_id = ? AND type = ?', [
          companyId,
          page.startingAfter,
        ]))
      )
        return undefined;
      clause = ' AND type > ?';
      params.push(page.startingAfter);
    }
    const rows = await this.db.all(`SELECT * FROM prices WHERE company_id = ?${clause} ORDER BY type LIMIT ?`, [
      ...params,
      page.limit + 1,
    ]);
    return { rows: rows.slice(0, page.limit).map(toPrice), hasMore: rows.length > page.limit };
  }
  async findPrices(companyId: string, types: string[]) {
    if (types.length === 0) return [];
    const [inTypes, params] = this.inList('type', types);
    return (await this.db.all(`SELECT * FROM prices WHERE company_id = ? AND ${inTypes}`, [companyId, ...params])).map(
      toPrice,
    );
  }
  async findEvent(companyId: string, eventId: string) {
    const r = await this.one('SELECT * FROM events WHERE company_id = ? AND event_id = ?', [companyId, eventId]);
    return r && toEvent(r);
  }
  async findEventsByIds(companyId: string, eventIds: string[]) {
    if (eventIds.length === 0) return [];
    const [inIds, params] = this.inList('event_id', eventIds);
    return (await this.db.all(`SELECT * FROM events WHERE company_id = ? AND ${inIds}`, [companyId, ...params])).map(
      toEvent,
    );
  }
  async findExpiredHolds(nowMs: number, limit: number, only?: BalanceKey[]) {
    if (only === undefined) {
      return (
        await this.db.all(
          "SELECT * FROM events WHERE state = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
          [nowMs, limit],
        )
      ).map(toEvent);
    }
    // Each balance's oldest `limit`, then merged: oldest first across all of them, as documented.
    const out: EventRow[] = [];
    for (const k of only) {
      const rows = await this.db.all(
        "SELECT * FROM events WHERE account_id = ? AND denomination = ? AND state = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
        [k.accountId, k.denomination, nowMs, limit],
      );
      out.push(...rows.map(toEvent));
    }
    return out.sort((a, b) => a.expiresAtMs! - b.expiresAtMs!).slice(0, limit);
  }
  async listTransactions(accountId: string, denomination: string | undefined, page: Page) {
    if (denomination !== undefined) {
      return this.pageBySeq(
        'transactions',
        'transaction_id',
        [
          ['account_id', accountId],
          ['denomination', denomination],
        ],
        page,
        toTransaction,
      );
    }
    // Every denomination: the newest `limit + 1` of each denomination's range of
    // transactions_balance, merged. (No index on the account alone: the ingest path keeps one per-account index.)
    let cursorSeq: unknown;
    if (page.startingAfter !== undefined) {
      cursorSeq = await this.cursorSeq('transactions', 'transaction_id', page.startingAfter, 'account_id = ?', [
        accountId,
      ]);
      if (cursorSeq === undefined) return undefined;
    }
    // The account's denominations, by a loose index scan: one seek per denomination.
    const names = (
      await this.db.all(
        `WITH RECURSIVE d(denomination) AS (
         SELECT MIN(denomination) FROM transactions WHERE account_id = ?
         UNION ALL
         SELECT (SELECT MIN(t.denomination) FROM transactions t WHERE t.account_id = ? AND t.denomination > d.denomination) FROM d WHERE d.denomination IS NOT NULL
       ) SELECT denomination FROM d WHERE denomination IS NOT NULL`,
        [accountId, accountId],
      )
    ).map((r) => String(r.denomination));
    const rows: SqlRow[] = [];
    for (let i = 0; i < names.length; i += UNION_TERMS_MAX) {
      const chunk = names.slice(i, i + UNION_TERMS_MAX);
      const [accountSql, accountParams] = this.inList('account_id', [accountId]);
      const one =
        `SELECT * FROM (SELECT * FROM transactions WHERE ${accountSql} AND denomination = ?` +
        `${cursorSeq === undefined ? '' : ' AND seq < ?'} ORDER BY ${this.seqOrder('account_id')} LIMIT ?) t`;
      const params = chunk.flatMap((d) => {
        const keys = [...accountParams, d];
        return cursorSeq === undefined ? [...keys, page.limit + 1] : [...keys, cursorSeq, page.limit + 1];
      });
      rows.push(...(await this.db.all(chunk.map(() => one).join(' UNION ALL '), params)));
    }
    rows.sort((a, b) => Number(b.seq) - Number(a.seq));
    return { rows: rows.slice(0, page.limit).map(toTransaction), hasMore: rows.length > page.limit };
  }
  async findIdempotency(scope: string, key: string) {
    const r = await this.one('SELECT * FROM idempotency_keys WHERE scope = ? AND key = ?', [scope, key]);
    return r && toIdempotency(r);
  }

  async auditLedger(): Promise<AuditViolation[]> {
    const out: AuditViolation[] = [];
    const sums = await this.db.all(`
      SELECT b.account_id, b.denomination, b.amount, COALESCE(t.total, 0) AS total
      FROM balances b LEFT JOIN (SELECT account_id, denomination, SUM(amount) AS total FROM transactions GROUP BY account_id, denomination) t
        ON t.account_id = b.account_id AND t.denomination = b.denomination
      WHERE b.amount <> COALESCE(t.total, 0)`);
    for (const r of sums)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `amount ${r.amount} ≠ sum of transactions ${r.total}`,
      });
    const chain = await this.db.all(`
      SELECT account_id, denomination, transaction_id, amount, balance_after, prev FROM (
        SELECT account_id, denomination, transaction_id, amount, balance_after,
               LAG(balance_after, 1, 0) OVER (PARTITION BY account_id, denomination ORDER BY seq) AS prev
        FROM transactions) x
      WHERE prev + amount <> balance_after`);
    for (const r of chain)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `transaction ${r.transaction_id}: ${r.prev} + ${r.amount} ≠ balance_after ${r.balance_after}`,
      });
    const holds = await this.db.all(`
      SELECT b.account_id, b.denomination, b.pending, COALESCE(e.held, 0) AS held
      FROM balances b LEFT JOIN (SELECT account_id, denomination, SUM(cost_amount) AS held FROM events WHERE state = 'pending' GROUP BY account_id, denomination) e
        ON e.account_id = b.account_id AND e.denomination = b.denomination
      WHERE b.pending <> COALESCE(e.held, 0)`);
    for (const r of holds)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `pending ${r.pending} ≠ held cost of pending events ${r.held}`,
      });
    const orphans = await this.db.all(`
      SELECT t.account_id, t.denomination, COUNT(*) AS n FROM transactions t
      LEFT JOIN balances b ON b.account_id = t.account_id AND b.denomination = t.denomination
      WHERE b.account_id IS NULL GROUP BY t.account_id, t.denomination`);
    for (const r of orphans)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `${r.n} transactions without a balance`,
      });
    out.push(...(await this.auditMoneyMovement()));
    return out;
  }

  async insertUser(row: Omit<UserRow, 'id'>) {
    const r = await this.one(
      'INSERT INTO users (name, email, password_hash, date_of_birth, email_verified, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
      [row.name, row.email, row.passwordHash, row.dateOfBirth, this.bool(row.emailVerified), row.createdAtMs],
    );
    return toUser(r!);
  }
  async updateUser(id: number, changes: { name?: string; email?: string }) {
    if (changes.name !== undefined) await this.db.run('UPDATE users SET name = ? WHERE id = ?', [changes.name, id]);
    if (changes.email !== undefined) await this.db.run('UPDATE users SET email = ? WHERE id = ?', [changes.email, id]);
  }
  async insertCompany(row: CompanyRow) {
    await this.db.run(
      'INSERT INTO companies (company_id, name, owner_user_id, processor, processor_api_key, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      [row.companyId, row.name, row.ownerUserId, row.processor, row.processorApiKey, row.createdAtMs],
    );
  }
  async addCompanyMember(companyId: string, userId: number, role: string) {
    await this.db.run('INSERT INTO company_members (company_id, user_id, role) VALUES (?, ?, ?)', [
      companyId,
      userId,
      role,
    ]);
  }
  async insertApiKey(row: ApiKeyRow) {
    await this.db.run(
      'INSERT INTO api_keys (key_id, company_id, digest, prefix, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)',
      [row.keyId, row.companyId, row.digest, row.prefix, row.createdAtMs, row.revokedAtMs],
    );
  }
  async revokeApiKey(companyId: string, keyId: string, atMs: number) {
    return (
      (await this.db.run(
        'UPDATE api_keys SET revoked_at = ? WHERE company_id = ? AND key_id = ? AND revoked_at IS NULL',
        [atMs, companyId, keyId],
      )) > 0
    );
  }
  async insertAccount(a: AccountRow) {
    await this.db.run(
      'INSERT INTO accounts (account_id, company_id, name, email, metadata, processor_id, plan_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [a.accountId, a.companyId, a.name, a.email, json(a.metadata), a.processorId, a.planId, a.createdAtMs],
    );
  }
  async updateAccount(a: AccountRow) {
    await this.db.run(
      'UPDATE accounts SET name = ?, email = ?, metadata = ?, processor_id = ?, plan_id = ? WHERE account_id = ? AND company_id = ?',
      [a.name, a.email, json(a.metadata), a.processorId, a.planId, a.accountId, a.companyId],
    );
  }
  async insertBalance(b: BalanceRow) {
    const changed = await this.db.run(
      `INSERT INTO balances (account_id, denomination, company_id, amount, pending, refill_threshold, refill_amount, refill_usd_amount, refill_on_day, created_at)
       VALUES (?, ?, ?, 0, 0, ?, ?, ?, ?, ?) ON CONFLICT (account_id, denomination) DO NOTHING`,
      [
        b.accountId,
        b.denomination,
        b.companyId,
        b.refillThreshold,
        b.refillAmount,
        b.refillUsdAmount,
        b.refillOnDay,
        b.createdAtMs,
      ],
    );
    return changed > 0;
  }
  abstract lockBalances(keys: BalanceKey[]): Promise<BalanceRow[]>;
  abstract applyBalanceDeltas(deltas: BalanceDelta[]): Promise<BalanceRow[]>;
  abstract insertEvents(rows: EventRow[]): Promise<void>;
  abstract insertTransactions(rows: TransactionRow[]): Promise<void>;
  async writeLedger(events: EventRow[], deltas: BalanceDelta[], transactions: TransactionRow[]): Promise<BalanceRow[]> {
    await this.insertEvents(events);
    const after = await this.applyBalanceDeltas(deltas);
    await this.insertTransactions(transactions);
    return after;
  }
  abstract lockEvents(keys: EventKey[]): Promise<EventRow[]>;

  async upsertPrice(p: PriceRow) {
    await this.db.run(
      `INSERT INTO prices (company_id, type, denomination, unit_amount, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (company_id, type) DO UPDATE SET denomination = excluded.denomination, unit_amount = excluded.unit_amount, updated_at = excluded.updated_at`,
      [p.companyId, p.type, p.denomination, p.unitAmount, p.updatedAtMs],
    );
  }
  async updateEvents(
    changes: { companyId: string; eventId: string; state: EventStateValue; costAmount: number; updatedAtMs: number }[],
  ) {
    for (const c of changes) {
      await this.db.run(
        'UPDATE events SET state = ?, cost_amount = ?, updated_at = ?, expires_at = NULL WHERE company_id = ? AND event_id = ?',
        [c.state, c.costAmount, c.updatedAtMs, c.companyId, c.eventId],
      );
    }
  }
  async insertOutbox(rows: OutboxRow[]) {
    for (const o of rows) {
      await this.db.run(
        'INSERT INTO outbox (outbox_id, company_id, topic, payload, run_at, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        [o.outboxId, o.companyId, o.topic, JSON.stringify(o.payload), o.runAtMs, o.createdAtMs],
      );
    }
  }
  async claimOutbox(topicPrefix: string, nowMs: number, leaseMs: number, limit: number): Promise<ClaimedOutboxRow[]> {
    const rows = await this.db.all(
      `UPDATE outbox SET claimed_until = ?, attempts = attempts + 1
       WHERE seq IN (SELECT seq FROM outbox WHERE done_at IS NULL AND run_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
                     AND topic LIKE ? ESCAPE '\\' ORDER BY run_at, seq LIMIT ?${this.skipLocked()})
       RETURNING *`,
      [nowMs + leaseMs, nowMs, nowMs, `${topicPrefix.replace(/[%_\\]/g, (c) => `\\${c}`)}%`, limit],
    );
    return rows.map(toClaimedOutbox).sort((a, b) => a.runAtMs - b.runAtMs);
  }
  /** PostgreSQL: `FOR UPDATE SKIP LOCKED` in the claim's subquery; SQLite needs nothing. */
  protected skipLocked(): string {
    return '';
  }
  async completeOutbox(outboxId: string, nowMs: number) {
    await this.db.run('UPDATE outbox SET done_at = ?, claimed_until = NULL WHERE outbox_id = ?', [nowMs, outboxId]);
  }
  async retryOutbox(outboxId: string, runAtMs: number, error: string | null) {
    await this.db.run('UPDATE outbox SET run_at = ?, claimed_until = NULL, last_error = ? WHERE outbox_id = ?', [
      runAtMs,
      error,
      outboxId,
    ]);
  }
  async deleteFinishedOutbox(doneBeforeMs: number, limit: number) {
    return this.db.run(
      `DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE done_at IS NOT NULL AND done_at < ? ORDER BY done_at LIMIT ?${this.skipLocked()})`,
      [doneBeforeMs, limit],
    );
  }
  async claimIdempotency(row: IdempotencyRow) {
    return (
      (await this.db.run(
        'INSERT INTO idempotency_keys (scope, key, request_hash, status_code, response_body, created_at) VALUES (?, ?, ?, NULL, NULL, ?) ON CONFLICT (scope, key) DO NOTHING',
        [row.scope, row.key, row.requestHash, row.createdAtMs],
      )) > 0
    );
  }
  async completeIdempotency(scope: string, key: string, statusCode: number, responseBody: string) {
    await this.db.run('UPDATE idempotency_keys SET status_code = ?, response_body = ? WHERE scope = ? AND key = ?', [
      statusCode,
      responseBody,
      scope,
      key,
    ]);
  }
  async releaseIdempotency(scope: string, key: string) {
    await this.db.run('DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status_code IS NULL', [scope, key]);
  }
  async deleteIdempotencyBefore(createdBeforeMs: number) {
    return this.db.run('DELETE FROM idempotency_keys WHERE created_at < ?', [createdBeforeMs]);
  }
  // --- money movement

  /** PostgreSQL: `FOR UPDATE` on a single-row read that is about to be settled; SQLite needs nothing. */
  protected forUpdate(): string {
    return '';
  }

  async findCard(accountId: string) {
    const r = await this.one('SELECT * FROM cards WHERE account_id = ?', [accountId]);
    return r && toCard(r);
  }
  async findPlan(companyId: string, planId: string) {
    const r = await this.one('SELECT * FROM plans WHERE plan_id = ? AND company_id = ?', [planId, companyId]);
    return r && (await this.withPlanBalances([r]))[0];
  }
  async listPlans(companyId: string, page: Page) {
    const result = await this.pageBySeq('plans', 'plan_id', [['company_id', companyId]], page, (r) => r);
    if (!result) return undefined;
    return { rows: await this.withPlanBalances(result.rows), hasMore: result.hasMore };
  }
  private async withPlanBalances(rows: SqlRow[]): Promise<PlanRow[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((r) => String(r.plan_id));
    const [inIds, params] = this.inList('plan_id', ids);
    const entries = await this.db.all(`SELECT * FROM plan_balances WHERE ${inIds} ORDER BY plan_id, position`, params);
    return rows.map((r) =>
      toPlan(
        r,
        entries.filter((e) => e.plan_id === r.plan_id),
      ),
    );
  }
  async findAccountPlan(accountId: string) {
    const r = await this.one('SELECT * FROM account_plans WHERE account_id = ?', [accountId]);
    return r && toAccountPlan(r);
  }
  async findCharge(chargeId: string) {
    const r = await this.one('SELECT * FROM charges WHERE charge_id = ?', [chargeId]);
    return r && toCharge(r);
  }
  listCharges(accountId: string, page: Page) {
    return this.pageBySeq('charges', 'charge_id', [['account_id', accountId]], page, toCharge);
  }
  async listOutboxOfCompany(companyId: string, topicPrefix: string) {
    const rows = await this.db.all(
      "SELECT * FROM outbox WHERE company_id = ? AND topic LIKE ? ESCAPE '\\' ORDER BY seq",
      [companyId, `${topicPrefix.replace(/[%_\\]/g, (c) => `\\${c}`)}%`],
    );
    return rows.map((r) => ({
      outboxId: String(r.outbox_id),
      companyId: String(r.company_id),
      topic: String(r.topic),
      payload: JSON.parse(String(r.payload)) as Record<string, unknown>,
      runAtMs: num(r.run_at),
      createdAtMs: num(r.created_at),
    }));
  }
  async auditMoneyMovement(): Promise<AuditViolation[]> {
    const out: AuditViolation[] = [];
    const unpaid = await this.db.all(`
      SELECT t.account_id, t.denomination, t.transaction_id FROM transactions t
      WHERE t.kind = 'refill' AND NOT EXISTS (
        SELECT 1 FROM charges c WHERE c.transaction_id = t.transaction_id AND c.reason = 'refill' AND c.status = 'succeeded'
          AND c.account_id = t.account_id AND c.denomination = t.denomination)`);
    for (const r of unpaid)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `refill ${r.transaction_id} without a successful charge`,
      });
    const unrefilled = await this.db.all(`
      SELECT c.account_id, c.denomination, c.charge_id FROM charges c
      WHERE c.reason = 'refill' AND c.status = 'succeeded' AND NOT EXISTS (
        SELECT 1 FROM transactions t WHERE t.transaction_id = c.transaction_id AND t.kind = 'refill')`);
    for (const r of unrefilled)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination ?? ''),
        problem: `succeeded refill charge ${r.charge_id} added no refill`,
      });
    const shared = await this.db.all(`
      SELECT MIN(account_id) AS account_id, MIN(denomination) AS denomination, transaction_id, COUNT(*) AS n FROM charges
      WHERE transaction_id IS NOT NULL GROUP BY transaction_id HAVING COUNT(*) > 1`);
    for (const r of shared)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination ?? ''),
        problem: `transaction ${r.transaction_id} paid by ${r.n} charges`,
      });
    const inFlight = await this.db.all(`
      SELECT account_id, denomination, COUNT(*) AS n FROM charges WHERE reason = 'refill' AND status = 'pending'
      GROUP BY account_id, denomination HAVING COUNT(*) > 1`);
    for (const r of inFlight)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `${r.n} refills in flight at once`,
      });
    const marker = await this.db.all(`
      SELECT b.account_id, b.denomination, b.refill_charge_id FROM balances b
      LEFT JOIN charges c ON c.charge_id = b.refill_charge_id AND c.status = 'pending'
      WHERE b.refill_charge_id IS NOT NULL AND c.charge_id IS NULL`);
    for (const r of marker)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination),
        problem: `in-flight marker ${r.refill_charge_id} names no pending charge`,
      });
    const proration = await this.db.all(`
      SELECT c.account_id, c.denomination, c.charge_id FROM charges c
      WHERE c.reason = 'proration' AND c.status = 'succeeded' AND NOT EXISTS (
        SELECT 1 FROM transactions t WHERE t.transaction_id = c.transaction_id AND t.kind = 'proration')`);
    for (const r of proration)
      out.push({
        accountId: String(r.account_id),
        denomination: String(r.denomination ?? ''),
        problem: `succeeded proration charge ${r.charge_id} changed no balance`,
      });
    return out;
  }

  async upsertCard(c: CardRow) {
    await this.db.run(
      `INSERT INTO cards (account_id, company_id, payment_method_id, brand, last4, exp_month, exp_year, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE SET payment_method_id = excluded.payment_method_id, brand = excluded.brand, last4 = excluded.last4,
         exp_month = excluded.exp_month, exp_year = excluded.exp_year, created_at = excluded.created_at`,
      [c.accountId, c.companyId, c.paymentMethodId, c.brand, c.last4, c.expMonth, c.expYear, c.createdAtMs],
    );
  }
  async deleteCard(accountId: string) {
    await this.db.run('DELETE FROM cards WHERE account_id = ?', [accountId]);
  }
  async insertCharges(rows: ChargeRow[]) {
    for (const c of rows) {
      await this.db.run(
        `INSERT INTO charges (charge_id, company_id, account_id, denomination, reason, usd_cents, status, processor_ref, failure_code, failure_message, details, transaction_id, outbox_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          c.chargeId,
          c.companyId,
          c.accountId,
          c.denomination,
          c.reason,
          c.usdCents,
          c.status,
          c.processorRef,
          c.failureCode,
          c.failureMessage,
          JSON.stringify(c.details),
          c.transactionId,
          c.outboxId,
          c.createdAtMs,
          c.updatedAtMs,
        ],
      );
    }
  }
  async lockCharge(chargeId: string) {
    const r = await this.one(`SELECT * FROM charges WHERE charge_id = ?${this.forUpdate()}`, [chargeId]);
    return r && toCharge(r);
  }
  async updateCharge(chargeId: string, ch: ChargeChanges) {
    const sets: string[] = ['updated_at = ?'];
    const params: unknown[] = [ch.updatedAtMs];
    const cols: [keyof ChargeChanges, string][] = [
      ['status', 'status'],
      ['processorRef', 'processor_ref'],
      ['failureCode', 'failure_code'],
      ['failureMessage', 'failure_message'],
      ['transactionId', 'transaction_id'],
      ['outboxId', 'outbox_id'],
    ];
    for (const [k, col] of cols) {
      if (ch[k] !== undefined) {
        sets.push(`${col} = ?`);
        params.push(ch[k]);
      }
    }
    await this.db.run(`UPDATE charges SET ${sets.join(', ')} WHERE charge_id = ?`, [...params, chargeId]);
  }
  async lockChargesAwaitingCard(accountId: string) {
    return (
      await this.db.all(
        `SELECT * FROM charges WHERE account_id = ? AND status = 'requires_payment_method' ORDER BY seq${this.forUpdate()}`,
        [accountId],
      )
    ).map(toCharge);
  }
  async updateRefillSettings(accountId: string, denomination: string, s: RefillSettings) {
    await this.db.run(
      `UPDATE balances SET refill_threshold = ?, refill_amount = ?, refill_usd_amount = ?, refill_on_day = ?, refill_monthly = ?, monthly_anchor_at = ?, next_refill_at = ?
       WHERE account_id = ? AND denomination = ?`,
      [
        s.refillThreshold,
        s.refillAmount,
        s.refillUsdAmount,
        s.refillOnDay,
        this.bool(s.refillMonthly),
        s.monthlyAnchorAtMs,
        s.nextRefillAtMs,
        accountId,
        denomination,
      ],
    );
  }
  async updateRefillState(
    accountId: string,
    denomination: string,
    s: {
      refillChargeId?: string | null;
      consecutiveDeclines?: number;
      autoRefillPaused?: boolean;
      nextRefillAtMs?: number | null;
    },
  ) {
    const sets: string[] = [];
    const params: unknown[] = [];
    if (s.refillChargeId !== undefined) {
      sets.push('refill_charge_id = ?');
      params.push(s.refillChargeId);
    }
    if (s.consecutiveDeclines !== undefined) {
      sets.push('consecutive_declines = ?');
      params.push(s.consecutiveDeclines);
    }
    if (s.autoRefillPaused !== undefined) {
      sets.push('auto_refill_paused = ?');
      params.push(this.bool(s.autoRefillPaused));
    }
    if (s.nextRefillAtMs !== undefined) {
      sets.push('next_refill_at = ?');
      params.push(s.nextRefillAtMs);
    }
    if (sets.length === 0) return;
    await this.db.run(`UPDATE balances SET ${sets.join(', ')} WHERE account_id = ? AND denomination = ?`, [
      ...params,
      accountId,
      denomination,
    ]);
  }
  async claimDueMonthlyRefill(nowMs: number) {
    const r = await this.one(
      `SELECT * FROM balances WHERE next_refill_at IS NOT NULL AND next_refill_at <= ? AND refill_charge_id IS NULL
       ORDER BY next_refill_at LIMIT 1${this.skipLocked()}`,
      [nowMs],
    );
    return r && toBalance(r);
  }
  async setPlanBalance(accountId: string, denomination: string, included: number, alertPercentage: string | null) {
    await this.db.run(
      'UPDATE balances SET plan_included = ?, plan_alert_percentage = ?, plan_alerted = ? WHERE account_id = ? AND denomination = ?',
      [included, alertPercentage, this.bool(false), accountId, denomination],
    );
  }
  async setPlanAlerted(accountId: string, denomination: string, alerted: boolean) {
    await this.db.run('UPDATE balances SET plan_alerted = ? WHERE account_id = ? AND denomination = ?', [
      this.bool(alerted),
      accountId,
      denomination,
    ]);
  }
  async insertPlan(p: PlanRow) {
    await this.db.run(
      `INSERT INTO plans (plan_id, company_id, name, charge_amount, billing_period, overage_charge_mode, threshold_alert_percentage, rollover, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        p.planId,
        p.companyId,
        p.name,
        p.chargeAmountUsdCents,
        p.billingPeriod,
        p.overageChargeMode,
        p.thresholdAlertPercentage,
        this.bool(p.rollover),
        p.createdAtMs,
      ],
    );
    let position = 0;
    for (const b of p.balances) {
      await this.db.run(
        'INSERT INTO plan_balances (plan_id, position, denomination, amount, overage_charge_amount) VALUES (?, ?, ?, ?, ?)',
        [p.planId, position++, b.denomination, b.amount, b.overageUnitUsdCents],
      );
    }
  }
  async insertAccountPlan(a: AccountPlanRow) {
    await this.db.run(
      'INSERT INTO account_plans (account_id, company_id, plan_id, anchor_at, period_start, next_renewal_at) VALUES (?, ?, ?, ?, ?, ?)',
      [a.accountId, a.companyId, a.planId, a.anchorAtMs, a.periodStartMs, a.nextRenewalAtMs],
    );
  }
  async claimDuePlanRenewal(nowMs: number) {
    const r = await this.one(
      `SELECT * FROM account_plans WHERE next_renewal_at <= ? ORDER BY next_renewal_at LIMIT 1${this.skipLocked()}`,
      [nowMs],
    );
    return r && toAccountPlan(r);
  }
  async updateAccountPlanPeriod(accountId: string, periodStartMs: number, nextRenewalAtMs: number) {
    await this.db.run('UPDATE account_plans SET period_start = ?, next_renewal_at = ? WHERE account_id = ?', [
      periodStartMs,
      nextRenewalAtMs,
      accountId,
    ]);
  }

  // --- webhooks
  listWebhookSubscriptions(companyId: string, page: Page) {
    return this.pageBySeq(
      'webhook_subscriptions',
      'webhook_id',
      [['company_id', companyId]],
      page,
      toWebhookSubscription,
      ' AND deleted_at IS NULL',
    );
  }
  async findWebhookSubscription(companyId: string, webhookId: string) {
    const r = await this.one(
      'SELECT * FROM webhook_subscriptions WHERE webhook_id = ? AND company_id = ? AND deleted_at IS NULL',
      [webhookId, companyId],
    );
    return r && toWebhookSubscription(r);
  }
  async findWebhookTargets(companyIds: string[]): Promise<WebhookTarget[]> {
    if (companyIds.length === 0) return [];
    const [inIds, params] = this.inList('company_id', companyIds);
    const rows = await this.db.all(
      `SELECT webhook_id, company_id, type, threshold FROM webhook_subscriptions
       WHERE ${inIds} AND deleted_at IS NULL AND disabled_at IS NULL`,
      params,
    );
    return rows.map(toWebhookTarget);
  }
  async countWebhookSubscriptions(companyId: string) {
    return num(
      (
        await this.one('SELECT COUNT(*) AS n FROM webhook_subscriptions WHERE company_id = ? AND deleted_at IS NULL', [
          companyId,
        ])
      )?.n ?? 0,
    );
  }
  async findWebhookDelivery(companyId: string, callbackId: string) {
    const r = await this.one('SELECT * FROM webhook_deliveries WHERE callback_id = ? AND company_id = ?', [
      callbackId,
      companyId,
    ]);
    return r && toWebhookDelivery(r);
  }
  listWebhookDeliveries(webhookId: string, page: Page) {
    return this.pageBySeq('webhook_deliveries', 'callback_id', [['webhook_id', webhookId]], page, toWebhookDelivery);
  }
  async listWebhookAttempts(callbackIds: string[]) {
    if (callbackIds.length === 0) return [];
    const [inIds, params] = this.inList('callback_id', callbackIds);
    return (await this.db.all(`SELECT * FROM webhook_attempts WHERE ${inIds} ORDER BY seq`, params)).map(
      toWebhookAttempt,
    );
  }
  async insertWebhookSubscription(w: WebhookSubscriptionRow) {
    await this.db.run(
      `INSERT INTO webhook_subscriptions (webhook_id, company_id, type, url, threshold, secret, created_at, deleted_at, disabled_at, disabled_reason)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        w.webhookId,
        w.companyId,
        w.type,
        w.url,
        w.threshold,
        w.secret,
        w.createdAtMs,
        w.deletedAtMs,
        w.disabledAtMs,
        w.disabledReason,
      ],
    );
  }
  async deleteWebhookSubscription(companyId: string, webhookId: string, atMs: number) {
    return (
      (await this.db.run(
        'UPDATE webhook_subscriptions SET deleted_at = ? WHERE webhook_id = ? AND company_id = ? AND deleted_at IS NULL',
        [atMs, webhookId, companyId],
      )) > 0
    );
  }
  async insertWebhookDeliveries(rows: WebhookDeliveryRow[]) {
    for (const d of rows)
      await this.db.run(
        `INSERT INTO webhook_deliveries (${WEBHOOK_DELIVERY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (callback_id) DO NOTHING`,
        webhookDeliveryParams(d),
      );
  }
  async updateWebhookDeliveryPayload(callbackId: string, payload: string) {
    await this.db.run('UPDATE webhook_deliveries SET payload = ? WHERE callback_id = ?', [payload, callbackId]);
  }
  async claimWebhookDeliveries(nowMs: number, wallNowMs: number, leaseMs: number, limit: number, claimToken: string) {
    const rows = await this.db.all(
      `UPDATE webhook_deliveries SET claimed_until = ?, claim_token = ?
       WHERE seq IN (SELECT seq FROM webhook_deliveries
                     WHERE status = 'pending' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
                     ORDER BY next_attempt_at, seq LIMIT ?${this.skipLocked()})
       RETURNING *`,
      [wallNowMs + leaseMs, claimToken, nowMs, wallNowMs, limit],
    );
    const claimed = rows.map(toWebhookDelivery).sort((a, b) => (a.nextAttemptAtMs ?? 0) - (b.nextAttemptAtMs ?? 0));
    return this.withSubscriptions(claimed, claimToken, wallNowMs + leaseMs);
  }
  async claimWebhookDelivery(
    companyId: string,
    callbackId: string,
    wallNowMs: number,
    leaseMs: number,
    claimToken: string,
  ) {
    const rows = await this.db.all(
      `UPDATE webhook_deliveries SET claimed_until = ?, claim_token = ?
       WHERE callback_id = ? AND company_id = ? AND (claimed_until IS NULL OR claimed_until <= ?) RETURNING *`,
      [wallNowMs + leaseMs, claimToken, callbackId, companyId, wallNowMs],
    );
    if (rows.length === 0)
      return (await this.findWebhookDelivery(companyId, callbackId)) ? ('busy' as const) : undefined;
    return (await this.withSubscriptions(rows.map(toWebhookDelivery), claimToken, wallNowMs + leaseMs))[0];
  }
  protected async withSubscriptions(
    rows: WebhookDeliveryRow[],
    claimToken: string,
    claimedUntilMs: number,
  ): Promise<ClaimedWebhookDelivery[]> {
    if (rows.length === 0) return [];
    const ids = [...new Set(rows.map((r) => r.webhookId))];
    const [inIds, params] = this.inList('webhook_id', ids);
    const subs = new Map(
      (await this.db.all(`SELECT * FROM webhook_subscriptions WHERE ${inIds}`, params)).map((r) => [
        String(r.webhook_id),
        toWebhookSubscription(r),
      ]),
    );
    return rows.map((d) => {
      const sub = subs.get(d.webhookId);
      const subscriptionState =
        !sub || sub.deletedAtMs !== null
          ? ('deleted' as const)
          : sub.disabledAtMs !== null
            ? ('disabled' as const)
            : ('active' as const);
      return { ...d, claimToken, claimedUntilMs, url: sub?.url ?? '', secret: sub?.secret ?? '', subscriptionState };
    });
  }
  async recordWebhookDeliveries(updates: WebhookDeliveryUpdate[]) {
    for (const u of updates) {
      if (u.attempt)
        await this.db.run(
          `INSERT INTO webhook_attempts (${WEBHOOK_ATTEMPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`,
          webhookAttemptParams(u.attempt, this.bool),
        );
      await this.db.run(
        `UPDATE webhook_deliveries SET status = ?, attempts = attempts + ?, next_attempt_at = ?, delivered_at = ?, last_error = ?, claimed_until = NULL, claim_token = NULL
         WHERE callback_id = ? AND claim_token = ?`,
        [u.status, u.attempt ? 1 : 0, u.nextAttemptAtMs, u.deliveredAtMs, u.lastError, u.callbackId, u.claimToken],
      );
      if (u.disable) {
        await this.db.run(
          'UPDATE webhook_subscriptions SET disabled_at = ?, disabled_reason = ? WHERE webhook_id = ? AND disabled_at IS NULL',
          [u.disable.atMs, u.disable.reason, u.disable.webhookId],
        );
      }
    }
  }
  async deleteWebhookDeliveriesBefore(createdBeforeMs: number, wallNowMs: number, limit: number) {
    const ids = (
      await this.db.all(
        `SELECT callback_id FROM webhook_deliveries
       WHERE created_at < ? AND status <> 'pending' AND (claimed_until IS NULL OR claimed_until <= ?)
       ORDER BY created_at LIMIT ?${this.skipLocked()}`,
        [createdBeforeMs, wallNowMs, limit],
      )
    ).map((r) => String(r.callback_id));
    if (ids.length === 0) return 0;
    const [inIds, params] = this.inList('callback_id', ids);
    await this.db.run(`DELETE FROM webhook_attempts WHERE ${inIds}`, params);
    return this.db.run(`DELETE FROM webhook_deliveries WHERE ${inIds}`, params);
  }
}

// --- money movement: row mapping

function moneyFieldsOfBalance(r: SqlRow) {
  return {
    refillMonthly: Boolean(r.refill_monthly),
    monthlyAnchorAtMs: numOrNull(r.monthly_anchor_at),
    nextRefillAtMs: numOrNull(r.next_refill_at),
    refillChargeId: strOrNull(r.refill_charge_id),
    consecutiveDeclines: num(r.consecutive_declines ?? 0),
    autoRefillPaused: Boolean(r.auto_refill_paused),
    planIncluded: numOrNull(r.plan_included),
    planAlertPercentage: strOrNull(r.plan_alert_percentage),
    planAlerted: Boolean(r.plan_alerted),
  };
}

const toCard = (r: SqlRow): CardRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  paymentMethodId: String(r.payment_method_id),
  brand: String(r.brand),
  last4: String(r.last4),
  expMonth: num(r.exp_month),
  expYear: num(r.exp_year),
  createdAtMs: num(r.created_at),
});

export const toCharge = (r: SqlRow): ChargeRow => ({
  chargeId: String(r.charge_id),
  companyId: String(r.company_id),
  accountId: String(r.account_id),
  denomination: strOrNull(r.denomination),
  reason: String(r.reason) as ChargeRow['reason'],
  usdCents: num(r.usd_cents),
  status: String(r.status) as ChargeRow['status'],
  processorRef: strOrNull(r.processor_ref),
  failureCode: strOrNull(r.failure_code),
  failureMessage: strOrNull(r.failure_message),
  details: JSON.parse(String(r.details)) as Record<string, unknown>,
  transactionId: strOrNull(r.transaction_id),
  outboxId: strOrNull(r.outbox_id),
  createdAtMs: num(r.created_at),
  updatedAtMs: num(r.updated_at),
});

const toPlan = (r: SqlRow, entries: SqlRow[]): PlanRow => ({
  planId: String(r.plan_id),
  companyId: String(r.company_id),
  name: String(r.name),
  chargeAmountUsdCents: num(r.charge_amount),
  billingPeriod: 'month',
  overageChargeMode: 'postpay',
  thresholdAlertPercentage: strOrNull(r.threshold_alert_percentage),
  rollover: Boolean(r.rollover),
  createdAtMs: num(r.created_at),
  balances: entries.map((e) => ({
    denomination: String(e.denomination),
    amount: num(e.amount),
    overageUnitUsdCents: num(e.overage_charge_amount),
  })),
});

const toAccountPlan = (r: SqlRow): AccountPlanRow => ({
  accountId: String(r.account_id),
  companyId: String(r.company_id),
  planId: String(r.plan_id),
  anchorAtMs: num(r.anchor_at),
  periodStartMs: num(r.period_start),
  nextRenewalAtMs: num(r.next_renewal_at),
});

// --- webhooks
export const toWebhookSubscription = (r: SqlRow): WebhookSubscriptionRow => ({
  webhookId: String(r.webhook_id),
  companyId: String(r.company_id),
  type: String(r.type) as WebhookType,
  url: String(r.url),
  threshold: numOrNull(r.threshold),
  secret: String(r.secret),
  createdAtMs: num(r.created_at),
  deletedAtMs: numOrNull(r.deleted_at),
  disabledAtMs: numOrNull(r.disabled_at),
  disabledReason: strOrNull(r.disabled_reason),
});
const toWebhookTarget = (r: SqlRow): WebhookTarget => ({
  webhookId: String(r.webhook_id),
  companyId: String(r.company_id),
  type: String(r.type) as WebhookType,
  threshold: numOrNull(r.threshold),
});
export const toWebhookDelivery = (r: SqlRow): WebhookDeliveryRow => ({
  callbackId: String(r.callback_id),
  webhookId: String(r.webhook_id),
  companyId: String(r.company_id),
  type: String(r.type) as WebhookType,
  payload: String(r.payload),
  status: String(r.status) as WebhookDeliveryRow['status'],
  attempts: num(r.attempts),
  nextAttemptAtMs: numOrNull(r.next_attempt_at),
  createdAtMs: num(r.created_at),
  deliveredAtMs: numOrNull(r.delivered_at),
  lastError: strOrNull(r.last_error),
});
const toWebhookAttempt = (r: SqlRow): WebhookAttemptRow => ({
  callbackId: String(r.callback_id),
  attemptedAtMs: num(r.attempted_at),
  statusCode: numOrNull(r.status_code),
  latencyMs: num(r.latency_ms),
  responseSnippet: String(r.response_snippet),
  error: strOrNull(r.error),
  manual: Boolean(r.manual),
});
export const WEBHOOK_DELIVERY_COLUMNS =
  'callback_id, webhook_id, company_id, type, payload, status, attempts, next_attempt_at, created_at, delivered_at, last_error';
export const webhookDeliveryParams = (d: WebhookDeliveryRow): unknown[] => [
  d.callbackId,
  d.webhookId,
  d.companyId,
  d.type,
  d.payload,
  d.status,
  d.attempts,
  d.nextAttemptAtMs,
  d.createdAtMs,
  d.deliveredAtMs,
  d.lastError,
];
export const WEBHOOK_ATTEMPT_COLUMNS =
  'callback_id, attempted_at, status_code, latency_ms, response_snippet, error, manual';
export const webhookAttemptParams = (a: WebhookAttemptRow, bool: (b: boolean) => unknown): unknown[] => [
  a.callbackId,
  a.attemptedAtMs,
  a.statusCode,
  a.latencyMs,
  a.responseSnippet,
  a.error,
  bool(a.manual),
];
