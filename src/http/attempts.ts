/**
 * Failed password attempts, counted per key (`email:…`, `ip:…`) in fixed one-minute windows, in
 * this process's memory (as @fastify/rate-limit's local store; that plugin counts every request to a
 * route, and cannot count only failures nor be asked before the work is done). A key at its limit is
 * refused before scrypt runs; a success counts nothing. Wall clock: a limit protects the CPU, not a
 * business rule, so the test clock does not move it.
 */
export class AttemptLimiter {
  readonly #windows = new Map<string, { count: number; endsAtMs: number }>();
  /** Past this many keys, finished windows are dropped (and all of them if none has finished). */
  static readonly KEYS_MAX = 100_000;

  constructor(
    readonly max: number,
    readonly windowMs: number,
  ) {}

  /** Milliseconds until every key is below its limit again (0: go ahead). */
  retryAfterMs(keys: readonly string[], nowMs = Date.now()): number {
    let wait = 0;
    for (const key of keys) {
      const w = this.#windows.get(key);
      if (w && w.endsAtMs > nowMs && w.count >= this.max) wait = Math.max(wait, w.endsAtMs - nowMs);
    }
    return wait;
  }

  /** Counts one attempt against each key. */
  record(keys: readonly string[], nowMs = Date.now()): void {
    if (this.#windows.size >= AttemptLimiter.KEYS_MAX) this.#prune(nowMs);
    for (const key of keys) {
      const w = this.#windows.get(key);
      if (w && w.endsAtMs > nowMs) w.count++;
      else this.#windows.set(key, { count: 1, endsAtMs: nowMs + this.windowMs });
    }
  }

  #prune(nowMs: number): void {
    for (const [k, w] of this.#windows) if (w.endsAtMs <= nowMs) this.#windows.delete(k);
    if (this.#windows.size >= AttemptLimiter.KEYS_MAX) this.#windows.clear();
  }
}
