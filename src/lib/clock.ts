/**
 * The one source of time. Domain rules never read a clock; operations and workers ask the
 * injected Clock, so the test clock can move the whole server forward deterministically.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch (UTC). */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to (BILLING_TEST_CLOCK=1). It never goes backwards. */
export class TestClock implements Clock {
  #nowMs: number;
  constructor(startMs: number = Date.now()) {
    this.#nowMs = startMs;
  }
  now(): number {
    return this.#nowMs;
  }
  /** Moves forward to `toMs`; returns false (and does nothing) when that would go backwards. */
  advanceTo(toMs: number): boolean {
    if (!Number.isSafeInteger(toMs) || toMs < this.#nowMs) return false;
    this.#nowMs = toMs;
    return true;
  }
}

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
