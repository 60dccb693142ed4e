/**
 * What follows a change of balances, inside the same transaction: every write path goes
 * through postToLedger, which calls each registered effect with the balances before and
 * after. Effects only write rows (outbox notifications, refill decisions); anything that
 * leaves the process happens later, from the outbox, after the commit.
 */
import type { BalanceRow, Tx } from '../store/types.js';

export interface BalanceChange {
  before: BalanceRow;
  after: BalanceRow;
}

export type BalanceEffect = (tx: Tx, nowMs: number, changes: BalanceChange[]) => Promise<void>;

const effects: BalanceEffect[] = [];

/** Registered once at start by the modules that react to balance changes (refills, webhooks). */
export function registerBalanceEffect(effect: BalanceEffect): void {
  if (!effects.includes(effect)) effects.push(effect);
}

export async function runBalanceEffects(tx: Tx, nowMs: number, changes: BalanceChange[]): Promise<void> {
  if (changes.length === 0) return;
  for (const effect of effects) await effect(tx, nowMs, changes);
}
