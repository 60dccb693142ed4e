/**
 * Which company owns each account, remembered by the process that read it: an account is never deleted and
 * never changes company (the store deletes no account and writes `company_id` only when it creates one), so
 * an owner read once is the owner for good, whichever process created the account. Only accounts found are
 * remembered: an id not found is read again the next time (it may have been created since).
 *
 * It saves the ingest group commit, the pre-flight check and the group reads one statement each (on PostgreSQL
 * a round trip) once their accounts have been seen. One instance per thread that plans groups, built where the
 * group writers and readers are (ingest/group-commits.ts, the SQLite writer thread).
 */
import type { ReadTx } from '../store/types.js';

export class AccountOwners {
  /** Most owners remembered; when full, the map starts again empty (a miss costs one indexed read). */
  static readonly ENTRIES_MAX = 200_000;
  readonly #owners = new Map<string, string>();

  /**
   * The owner of each of `accountIds` that exists (by account id), read in `tx` for those not remembered: one
   * statement for all of them, none when every one is known.
   */
  async of(tx: ReadTx, accountIds: Iterable<string>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const missing = new Set<string>();
    for (const id of accountIds) {
      const owner = this.#owners.get(id);
      if (owner !== undefined) out.set(id, owner);
      else missing.add(id);
    }
    if (missing.size === 0) return out;
    const rows = await tx.accounts.findAccountOwners([...missing]);
    if (this.#owners.size + rows.length > AccountOwners.ENTRIES_MAX) this.#owners.clear();
    for (const { accountId, companyId } of rows) {
      this.#owners.set(accountId, companyId);
      out.set(accountId, companyId);
    }
    return out;
  }
}
