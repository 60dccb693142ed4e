/**
 * `billing audit`: the ledger audit over the whole database (the store's `auditLedger()` and
 * `auditMoneyMovement()`): every balance whose amount, transaction chain or holds disagree, and
 * every refill or proration without its charge; and the grants invariant (operations/grants.ts
 * auditGrants). Exit 0 when the ledger is exact, 3 otherwise.
 */
import { describeDatabase } from '../db-connect.js';
import { auditGrants } from '../operations/grants.js';
import type { AuditViolation } from '../store/types.js';
import { AUDIT_USAGE } from './usage.js';
import { type Io, EXIT_AUDIT_FAILED, EXIT_OK, JSON_OPTION, parseCommand, withStore } from './common.js';

const AUDIT_HELP = `Usage: ${AUDIT_USAGE}

Checks the whole ledger: for every balance, amount = the sum of its transactions, each transaction's
balance_after chains from the one before, pending = the cost held by pending events; every refill was
paid by one successful charge; every balance's grants hold its amount (amount = the grants' remaining
minus debt, 0 ≤ held ≤ remaining ≤ amount per grant) and each grant's held units are those its
pending events hold. Lists every problem; exits 0 when there is none, 3 when there is any.
Read-only, and safe while servers run: each check is one statement over one consistent snapshot.`;

/** auditLedger() may include the money-movement checks itself: each problem is listed once. */
function distinct(violations: AuditViolation[]): AuditViolation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    const key = JSON.stringify([v.accountId, v.denomination, v.problem]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export async function auditCommand(args: string[], io: Io): Promise<number> {
  const p = parseCommand(args, { ...JSON_OPTION }, AUDIT_USAGE);
  if (p.help) {
    io.out(AUDIT_HELP);
    return EXIT_OK;
  }
  return withStore(io, async ({ config, store }) => {
    const found = distinct(
      await store.read(async (tx) => [
        ...(await tx.transactions.auditLedger()),
        ...(await tx.charges.auditMoneyMovement()),
        ...(await auditGrants(tx)),
      ]),
    );
    const balances = new Set(found.map((v) => `${v.accountId}\u0000${v.denomination}`)).size;
    if (p.json)
      io.out(
        JSON.stringify({
          ok: found.length === 0,
          problems: found.map((v) => ({ account_id: v.accountId, denomination: v.denomination, problem: v.problem })),
        }),
      );
    else if (found.length === 0) io.out(`ledger audit: exact (${describeDatabase(config.databaseUrl)})`);
    else {
      io.out(`ledger audit: ${found.length} problem(s) in ${balances} balance(s)`);
      for (const v of found) io.out(`${v.accountId}  ${v.denomination}  ${v.problem}`);
    }
    return found.length === 0 ? EXIT_OK : EXIT_AUDIT_FAILED;
  });
}
