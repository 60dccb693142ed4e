/**
 * Every balance effect a server runs, registered in one call: by the server at start, and by
 * the SQLite ingest writer thread, whose module state is its own.
 */
import { registerBalanceEffect } from './balance-effects.js';
import { registerMoneyEffects } from './money-effects.js';
import { writeBalanceNotifications } from './webhooks.js';

export function registerBalanceEffects(): void {
  registerMoneyEffects();
  registerBalanceEffect(writeBalanceNotifications);
}
