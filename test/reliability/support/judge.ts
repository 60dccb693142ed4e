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
    const found = await store.read(async (tx) => [...(await tx.auditLedger()), ...(await tx.auditMoneyMovement())]);
    const seen = new Set<string>();
    for (const v of found) {
      const line = `${v.accountId} ${v.denomination}: ${v.problem}`;
      if (!seen.has(line)) problems.push(line);
      seen.add(line);
    }
  } finally {
    await store.close();
  }
  const usage = await db.sql(
    'SELECT e.event_id, e.state, e.cost_amount, COUNT(t.transaction_id) AS n, COALESCE(SUM(t.amount), 0) AS total ' +
      "FROM events e LEFT JOIN transactions t ON t.kind = 'usage' AND t.event_id = e.event_id " +
      'AND t.account_id = e.account_id GROUP BY e.event_id, e.account_id, e.state, e.cost_amount ' +
      "HAVING (e.state = 'complete' AND e.cost_amount <> 0 AND (COUNT(t.transaction_id) <> 1 " +
      'OR COALESCE(SUM(t.amount), 0) <> -e.cost_amount)) ' +
      "OR ((e.state <> 'complete' OR e.cost_amount = 0) AND COUNT(t.transaction_id) <> 0)",
  );
  for (const r of usage)
    problems.push(
      `event ${r.event_id} (${r.state}, cost ${r.cost_amount}): ${r.n} usage transaction(s) totalling ${r.total}`,
    );
  const orphans = await db.sql(
    "SELECT t.transaction_id, t.event_id FROM transactions t WHERE t.kind = 'usage' AND NOT EXISTS " +
      '(SELECT 1 FROM events e WHERE e.event_id = t.event_id AND e.account_id = t.account_id)',
  );
  for (const r of orphans) problems.push(`usage transaction ${r.transaction_id} names no event (${r.event_id})`);
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
