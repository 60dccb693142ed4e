/**
 * Balances: what an account holds of each denomination (`amount`, and `pending`: held by pending
 * events). Their figures and grants change only through the ledger's port (src/ledger/port.ts,
 * implemented in ledger/): locked, then written with the transactions that record the change.
 *
 * A balance row also carries its refill settings and state (written by refills/) and its plan
 * columns (written by plans/): every read of a balance fills them, and nothing here writes them.
 */
import type { MonthlyRefillCount } from '../../domain/refills.js';
import type { SpendLimits, SpendWindows } from '../../domain/spend.js';
import type { Grant } from '../grants/types.js';

export interface BalanceRow {
  accountId: string;
  companyId: string;
  denomination: string;
  amount: number;
  pending: number;
  refillThreshold: number | null;
  refillAmount: number | null;
  refillUsdCents: number | null;
  refillOnDay: string | null;
  createdAtMs: number;
  /** The live grants of the balance with their remainders and holds (grants/types.ts). */
  grants: Grant[];
  /** The soonest start or expiry of those grants, or null. */
  grantsDueAtMs: number | null;
  /** The units usage took in its UTC day and month, as last written (domain/spend.ts spendAt: as of now). */
  spend: SpendWindows;
  /** Limits on that spend (null: none). */
  limits: SpendLimits;
  /** How many alerts the balance has (store/alerts/: a posting reads them only where there are some). */
  alertCount: number;
  /** Its alerts' watch (domain/alerts.ts AlertWatch) as JSON; null: decide every change. */
  alertWatch: string | null;
  // --- money movement: filled by every read of a balance row (their columns' defaults on a new balance)
  /** Monthly refill switched on. */
  refillMonthly: boolean;
  /** Start instant of the monthly schedule (the day rule counts from it). */
  monthlyAnchorAtMs: number | null;
  /** When the next monthly refill is due. */
  nextRefillAtMs: number | null;
  /** The refill charge in flight for this balance (at most one), or null. */
  refillChargeId: string | null;
  consecutiveDeclines: number;
  /** Threshold and monthly refills stopped after repeated declines, until a new card is attached. */
  autoRefillPaused: boolean;
  /** Threshold refills allowed per UTC month (null: no cap), those started in a month, the month capped. */
  refillMaxPerMonth: number | null;
  refillsInMonth: MonthlyRefillCount;
  refillCappedMonthStartMs: number | null;
  /**
   * Plan balances: the included amount per period, the alert percentage, and whether it was
   * alerted this period.
   */
  planIncluded: number | null;
  planAlertPercentage: string | null;
  planAlerted: boolean;
}

/** The money-movement fields of a balance row: set by refills/ and plans/ methods, never by insertBalance. */
type BalanceMoneyFields =
  | 'grants'
  | 'grantsDueAtMs'
  | 'spend'
  | 'limits'
  | 'alertCount'
  | 'alertWatch'
  | 'refillMonthly'
  | 'monthlyAnchorAtMs'
  | 'nextRefillAtMs'
  | 'refillChargeId'
  | 'consecutiveDeclines'
  | 'autoRefillPaused'
  | 'refillMaxPerMonth'
  | 'refillsInMonth'
  | 'refillCappedMonthStartMs'
  | 'planIncluded'
  | 'planAlertPercentage'
  | 'planAlerted';

/**
 * A balance as code builds it for `insertBalance`: the money-movement fields may be left out
 * (insertBalance writes none of them; a new balance starts with their columns' defaults).
 */
export type NewBalanceRow = Omit<BalanceRow, BalanceMoneyFields> & Partial<Pick<BalanceRow, BalanceMoneyFields>>;

export interface BalanceDelta {
  accountId: string;
  denomination: string;
  amount: number;
  pending: number;
  /**
   * The balance's live grants after the change and their soonest start or expiry; absent: the
   * grants are left as they are (a store test's delta; every posting gives them).
   */
  grants?: Grant[];
  grantsDueAtMs?: number | null;
  /** The spend windows after the change (absolute: the balance is locked); absent, they stay. */
  spend?: SpendWindows;
  /**
   * With `grants`: the balance as locked before the change. The store leaves the row's grants text
   * as it is where it would be written the same: the grant being drawn is stored without its
   * remaining, which the amount gives (store/grants/sql.ts, balances/sql.ts storedLotsOf).
   */
  from?: Pick<BalanceRow, 'amount' | 'grants'>;
}

export interface BalanceKey {
  accountId: string;
  denomination: string;
}

export interface BalancesReadTx {
  findBalance(accountId: string, denomination: string): Promise<BalanceRow | undefined>;
  listBalances(accountId: string): Promise<BalanceRow[]>;
  /** Every balance in key order, `limit` at a time after `after` (audits). */
  scanBalances(after: BalanceKey | undefined, limit: number): Promise<BalanceRow[]>;
}

export interface BalancesTx extends BalancesReadTx {
  /** Inserts a zero balance; returns false when that balance already exists. */
  insertBalance(row: NewBalanceRow): Promise<boolean>;
  /** Sets a balance's spend limits (its figures are the ledger's); false when the balance does not exist. */
  setSpendLimits(accountId: string, denomination: string, limits: SpendLimits): Promise<boolean>;
}
