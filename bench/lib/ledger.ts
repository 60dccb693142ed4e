/**
 * What the server acknowledged, per account, and the check of the balances against it.
 *
 * Every balance starts at what its grants hold (INITIAL_GRANT, and the others of `--grants`).
 * A 2xx to an event submission means its events were recorded: complete ones lower `amount` by
 * their cost, pending ones raise `pending`; a 2xx to a settle moves the hold's cost from
 * `pending` to a decrease of `amount`; a 4xx changed nothing. A request without a response
 * (timeout, reset) or with a 5xx may or may not have been applied: the check then accepts
 * exactly the totals some subset of those requests would give, and nothing else. Settles
 * without an answer are resolved by reading the event back.
 */
import { mapConcurrent, type Api, type Transaction } from './api.js';
import { INITIAL_GRANT, SETUP_CONCURRENCY } from './options.js';

/** Above this many units of uncertain cost on one balance, the subset check is not attempted. */
const MAX_UNCERTAIN_UNITS = 50_000_000;
/** Nor above this many steps (requests × units): the answer would take too long to be useful. */
const MAX_SUBSET_STEPS = 200_000_000;

export interface AccountBook {
  accountId: string;
  /** Which scenario the account belongs to, for the report. */
  label: string;
  /** Units its grants held when it was set up (INITIAL_GRANT, and the others of `--grants`). */
  granted: number;
  /** Units the server acknowledged taking from `amount` (complete events, settled holds). */
  debited: number;
  /** Units acknowledged as held by pending events not (yet) settled. */
  held: number;
  /** Costs of event submissions whose fate is unknown. */
  uncertainDebits: number[];
  uncertainHolds: number[];
}

type HoldState = 'held' | 'settled' | 'uncertain';

interface Hold {
  accountId: string;
  cost: number;
  state: HoldState;
}

export interface Finding {
  accountId: string;
  label: string;
  check: 'amount' | 'pending' | 'available' | 'transactions' | 'hold' | 'grants';
  message: string;
}

export interface LedgerReport {
  accountsChecked: number;
  holdsResolved: number;
  transactionsChecked: { accountId: string; label: string; transactions: number }[];
  /** The audited accounts' grants at the end: how many were live, and whether they held the balance. */
  grantsChecked: { accountId: string; label: string; live: number }[];
  uncertainRequests: number;
  findings: Finding[];
}

/** Whether some subset of `costs` sums to exactly `target`; undefined when too large to decide. */
export function isSubsetSum(target: number, costs: readonly number[]): boolean | undefined {
  if (target === 0) return true;
  if (target < 0) return false;
  const total = costs.reduce((a, b) => a + b, 0);
  if (target > total) return false;
  if (total > MAX_UNCERTAIN_UNITS || costs.length * target > MAX_SUBSET_STEPS) return undefined;
  const reachable = new Uint8Array(target + 1);
  reachable[0] = 1;
  for (const cost of costs) {
    for (let sum = target; sum >= cost; sum--) {
      if (reachable[sum - cost] === 1) reachable[sum] = 1;
    }
    if (reachable[target] === 1) return true;
  }
  return reachable[target] === 1;
}

export class Ledger {
  private readonly books = new Map<string, AccountBook>();
  private readonly holds = new Map<string, Hold>();

  open(accountId: string, label: string, granted = INITIAL_GRANT): void {
    if (this.books.has(accountId)) throw new Error(`account ${accountId} opened twice`);
    this.books.set(accountId, {
      accountId,
      label,
      granted,
      debited: 0,
      held: 0,
      uncertainDebits: [],
      uncertainHolds: [],
    });
  }

  book(accountId: string): AccountBook {
    const book = this.books.get(accountId);
    if (book === undefined) throw new Error(`account ${accountId} is not in the ledger`);
    return book;
  }

  accounts(): AccountBook[] {
    return [...this.books.values()];
  }

  debit(accountId: string, cost: number): void {
    this.book(accountId).debited += cost;
  }

  uncertainDebit(accountId: string, cost: number): void {
    this.book(accountId).uncertainDebits.push(cost);
  }

  hold(accountId: string, eventId: string, cost: number): void {
    if (this.holds.has(eventId)) throw new Error(`event id ${eventId} acknowledged twice`);
    this.book(accountId).held += cost;
    this.holds.set(eventId, { accountId, cost, state: 'held' });
  }

  uncertainHold(accountId: string, cost: number): void {
    this.book(accountId).uncertainHolds.push(cost);
  }

  /** A 2xx to `PUT /v1/events/{id}` `{state: "complete"}`. */
  settle(eventId: string): void {
    const hold = this.holds.get(eventId);
    if (hold === undefined) throw new Error(`settled unknown event ${eventId}`);
    if (hold.state === 'settled') return; // a repeated state is a no-op on the server too
    this.moveToSettled(hold);
  }

  /** A settle whose outcome is unknown: read back at check time. */
  uncertainSettle(eventId: string): void {
    const hold = this.holds.get(eventId);
    if (hold !== undefined && hold.state === 'held') hold.state = 'uncertain';
  }

  private moveToSettled(hold: Hold): void {
    const book = this.book(hold.accountId);
    book.held -= hold.cost;
    book.debited += hold.cost;
    hold.state = 'settled';
  }

  uncertainRequests(): number {
    let n = 0;
    for (const book of this.books.values()) n += book.uncertainDebits.length + book.uncertainHolds.length;
    for (const hold of this.holds.values()) if (hold.state === 'uncertain') n++;
    return n;
  }

  /**
   * Reads every balance back and compares; pages through the transactions of `auditAccounts`.
   * Call with no load running.
   */
  async check(api: Api, auditAccounts: readonly string[]): Promise<LedgerReport> {
    const findings: Finding[] = [];
    const uncertainRequests = this.uncertainRequests();

    const uncertain = [...this.holds].filter(([, hold]) => hold.state === 'uncertain');
    await mapConcurrent(uncertain, SETUP_CONCURRENCY, async ([eventId, hold]) => {
      const state = await api.eventState(eventId);
      if (state === 'complete') this.moveToSettled(hold);
      else if (state === 'pending') hold.state = 'held';
      else {
        const book = this.book(hold.accountId);
        findings.push({
          accountId: hold.accountId,
          label: book.label,
          check: 'hold',
          message: `event ${eventId} is "${state}" after a settle to complete (expected complete or pending)`,
        });
      }
    });

    const books = this.accounts();
    await mapConcurrent(books, SETUP_CONCURRENCY, async (book) => {
      const balance = await api.balance(book.accountId);
      findings.push(...compareBalance(book, balance));
    });

    const transactionsChecked: LedgerReport['transactionsChecked'] = [];
    const grantsChecked: LedgerReport['grantsChecked'] = [];
    for (const accountId of auditAccounts) {
      const book = this.book(accountId);
      const balance = await api.balance(accountId);
      const chain = new ChainCheck();
      for await (const tx of api.transactions(accountId)) chain.add(tx);
      const problem = chain.finish(balance.amount);
      if (problem !== undefined) {
        findings.push({ accountId, label: book.label, check: 'transactions', message: problem });
      }
      transactionsChecked.push({ accountId, label: book.label, transactions: chain.count });
      const grants = await api.grants(accountId);
      if (grants === undefined) continue; // a server without grants
      const grantProblem = compareGrants(balance, grants);
      if (grantProblem !== undefined)
        findings.push({ accountId, label: book.label, check: 'grants', message: grantProblem });
      grantsChecked.push({ accountId, label: book.label, live: grants.length });
    }

    return {
      accountsChecked: books.length,
      holdsResolved: uncertain.length,
      transactionsChecked,
      grantsChecked,
      uncertainRequests,
      findings,
    };
  }
}

/**
 * A balance's live grants against the balance (contract "Credit grants", invariant): the bench's
 * balances never run dry, so there is no debt and every hold is covered by grants: Σ `remaining`
 * must be `amount` and Σ `held` must be `pending`.
 */
export function compareGrants(
  balance: { amount: number; pending: number },
  grants: readonly { remaining: number; held: number }[],
): string | undefined {
  const remaining = grants.reduce((sum, g) => sum + g.remaining, 0);
  const held = grants.reduce((sum, g) => sum + g.held, 0);
  if (remaining !== balance.amount)
    return `its ${grants.length} live grants hold ${remaining} units, the balance amount is ${balance.amount}`;
  if (held !== balance.pending)
    return (
      `its ${grants.length} live grants hold ${held} units for pending events, ` +
      `the balance's pending is ${balance.pending}`
    );
  return undefined;
}

/** The balance the server reports against what it acknowledged. */
export function compareBalance(
  book: AccountBook,
  balance: { amount: number; pending: number; available: number },
): Finding[] {
  const findings: Finding[] = [];
  const at = { accountId: book.accountId, label: book.label };

  const expectedAmount = book.granted - book.debited;
  const extraDebit = expectedAmount - balance.amount;
  const debitOk = isSubsetSum(extraDebit, book.uncertainDebits);
  if (debitOk !== true) {
    findings.push({
      ...at,
      check: 'amount',
      message:
        `amount ${balance.amount}, expected ${expectedAmount} ` +
        `(granted ${book.granted} − acknowledged ${book.debited})` +
        (book.uncertainDebits.length > 0
          ? `; ${book.uncertainDebits.length} unanswered submissions ` +
            `${debitOk === undefined ? 'too large to decide' : 'cannot explain'} the difference of ${extraDebit}`
          : `: off by ${-extraDebit}`),
    });
  }

  const extraHeld = balance.pending - book.held;
  const heldOk = isSubsetSum(extraHeld, book.uncertainHolds);
  if (heldOk !== true) {
    findings.push({
      ...at,
      check: 'pending',
      message:
        `pending ${balance.pending}, expected ${book.held} (acknowledged holds not settled)` +
        (book.uncertainHolds.length > 0
          ? `; ${book.uncertainHolds.length} unanswered hold submissions ` +
            `${heldOk === undefined ? 'too large to decide' : 'cannot explain'} the difference of ${extraHeld}`
          : `: off by ${extraHeld}`),
    });
  }

  if (balance.available !== balance.amount - balance.pending) {
    findings.push({
      ...at,
      check: 'available',
      message: `available ${balance.available} ≠ amount ${balance.amount} − pending ${balance.pending}`,
    });
  }
  return findings;
}

/**
 * Transactions newest first: each `balance_after` must be the older one's plus its own amount,
 * the oldest must start from zero, the newest must equal the balance, and so the amounts sum to it.
 */
export class ChainCheck {
  count = 0;
  private sum = 0;
  private newest: Transaction | undefined;
  private previous: Transaction | undefined;
  private problem: string | undefined;

  add(tx: Transaction): void {
    this.count++;
    if (!Number.isSafeInteger(tx.amount) || !Number.isSafeInteger(tx.balance_after)) {
      this.problem ??= `transaction ${tx.transaction_id}: amount or balance_after is not an integer`;
    }
    this.sum += tx.amount;
    if (this.newest === undefined) this.newest = tx;
    const newer = this.previous;
    if (newer !== undefined && newer.balance_after - newer.amount !== tx.balance_after) {
      this.problem ??=
        `chain broken: ${newer.transaction_id} has balance_after ${newer.balance_after} and amount ${newer.amount}, ` +
        `but the transaction before it (${tx.transaction_id}) has balance_after ${tx.balance_after}`;
    }
    this.previous = tx;
  }

  /** A description of the first problem found, or undefined when the chain is exact. */
  finish(amount: number): string | undefined {
    if (this.problem !== undefined) return this.problem;
    if (this.newest === undefined || this.previous === undefined) {
      return amount === 0 ? undefined : `no transactions, but the balance amount is ${amount}`;
    }
    if (this.sum !== amount) return `transactions sum to ${this.sum}, the balance amount is ${amount}`;
    if (this.newest.balance_after !== amount) {
      const newest = this.newest;
      return (
        `newest transaction ${newest.transaction_id} has balance_after ${newest.balance_after}, ` +
        `the balance amount is ${amount}`
      );
    }
    const oldest = this.previous;
    if (oldest.balance_after !== oldest.amount) {
      return (
        `oldest transaction ${oldest.transaction_id} does not start from zero ` +
        `(amount ${oldest.amount}, balance_after ${oldest.balance_after})`
      );
    }
    return undefined;
  }
}
