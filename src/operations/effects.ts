/**
 * The balance effects of a server, in the order they run after every posting: the threshold
 * refill decision, the plan alert, then the notifications (last, so that they see the refill
 * state the others wrote). The composition root (server.ts) and the SQLite writer thread build
 * their `Ledger` from this one list.
 */
import { thresholdRefillEffect } from './refills.js';
import type { BalanceEffect } from './ledger.js';
import { writeBalanceNotifications } from './notifications.js';
import { planThresholdAlertEffect } from './plans.js';

export function balanceEffects(): readonly BalanceEffect[] {
  return [thresholdRefillEffect, planThresholdAlertEffect, writeBalanceNotifications];
}
