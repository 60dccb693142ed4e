/**
 * The judge every reliability scenario ends with: one ledger audit over the whole database.
 *
 * - the store's own audit (`auditLedger()` and `auditMoneyMovement()`, as `billing audit` runs them): for every
 *   balance, amount = Σ its transactions with an unbroken `balance_after` chain, pending = the held cost of its
 *   pending events; every refill paid by exactly one successful refill charge and every successful refill
 *   charge added exactly one refill;
 * - what the store's audit does not check: every complete event with a cost has exactly one usage transaction,
 *   of minus its cost, and no other event has any; no usage transaction without its complete event;
 * - SQLite: `PRAGMA integrity_check` is `ok`.
 *
 * It reads through its own connection, so it may run while servers still serve (each check is one statement).
 */
import assert from 'node:assert/strict';
import { openStore } from '../../../src/store/open.js';
import type { TestDatabase } from '../../cli/support.js';

export async function judge(db: TestDatabase): Promise<string[]> {
  const problems: string[] = [];
  const store = await openStore(db.url, { pgPoolSize: 2 });
  try {
    const found = await store.read(async (tx) => [
      ...(await tx.transactions.auditLedger()),
      ...(await tx.charges.auditMoneyMovement()),
    ]);
    const seen = new Set<string>();
    for (const v of found) {
      const line = `${v.accountId} ${v.denomination}: ${v.problem}`;
      if (!seen.has(line)) problems.push(line);
      seen.add(line);
    }
  } finally {
    await store.close();
  }
  // Usage transactions counted per event first, then joined once (SQLite builds an automatic index on the
  // counts): joined row by row, SQLite searched each account's transactions for every event (minutes on a
  // flood's 100k events).
  const usage = await db.sql(
    'WITH u AS MATERIALIZED (SELECT event_id, account_id, COUNT(*) AS n, SUM(amount) AS total FROM transactions ' +
      "WHERE kind = 'usage' GROUP BY event_id, account_id) " +
      'SELECT e.event_id, e.state, e.cost_amount, COALESCE(u.n, 0) AS n, COALESCE(u.total, 0) AS total ' +
      'FROM events e LEFT JOIN u ON u.event_id = e.event_id AND u.account_id = e.account_id ' +
      "WHERE (e.state = 'complete' AND e.cost_amount <> 0 AND (COALESCE(u.n, 0) <> 1 " +
      'OR COALESCE(u.total, 0) <> -e.cost_amount)) ' +
      "OR ((e.state <> 'complete' OR e.cost_amount = 0) AND COALESCE(u.n, 0) <> 0)",
  );
  for (const r of usage)
    problems.push(
      `event ${r.event_id} (${r.state}, cost ${r.cost_amount}): ${r.n} usage transaction(s) totalling ${r.total}`,
    );
  const orphans = await db.sql(
    "SELECT event_id, account_id FROM transactions WHERE kind = 'usage' EXCEPT SELECT event_id, account_id FROM events",
  );
  for (const r of orphans) problems.push(`usage transactions of account ${r.account_id} name no event (${r.event_id})`);
  if (db.dialect === 'sqlite') {
    const rows = await db.sql('PRAGMA integrity_check');
    const text = rows.map((r) => Object.values(r).join(' ')).join('; ');
    if (text !== 'ok') problems.push(`PRAGMA integrity_check: ${text}`);
  }
  return problems;
}

export async function assertJudged(db: TestDatabase): Promise<void> {
  assert.deepEqual(await judge(db), [], 'ledger audit');
}
