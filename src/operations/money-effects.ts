/** The balance effects of money movement, registered once at start (server.ts). */
import { thresholdRefillEffect } from './auto-refill.js';
import { registerBalanceEffect } from './balance-effects.js';
import { planThresholdAlertEffect } from './plans.js';

export function registerMoneyEffects(): void {
  registerBalanceEffect(thresholdRefillEffect);
  registerBalanceEffect(planThresholdAlertEffect);
}
