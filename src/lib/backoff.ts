/**
 * The one retry backoff of the engine, for charges the processor could not take and for webhook
 * deliveries: exponential from a base, capped; optionally with "equal jitter" (half the delay
 * fixed, half random) so that a receiver coming back is not hit by every sender at once.
 */

/** Delay before the next try after failed try number `attempt` (1-based): base · 2^(attempt−1), at most `maxMs`. */
export function backoffDelayMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
}

/** `delayMs` with equal jitter: between half of it (random01 = 0) and all of it (random01 = 1). */
export function withEqualJitter(delayMs: number, random01: number): number {
  const jitter = Math.min(Math.max(random01, 0), 1);
  return Math.ceil(delayMs / 2 + (delayMs / 2) * jitter);
}
