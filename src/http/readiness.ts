/**
 * Readiness for /readyz: the server is ready when it is not shutting down and its database
 * answers a trivial query within a short time. The answer is cached briefly, and concurrent probes
 * share one query, so that a probe storm never becomes a database storm.
 */

/** How long one readiness answer is reused. */
export const READINESS_CACHE_MS = 1_000;
/** How long the database may take to answer `SELECT 1` before it counts as unreachable. */
export const READINESS_TIMEOUT_MS = 1_000;

export type ReadinessState = { ready: true } | { ready: false; reason: string };

export class Readiness {
  #closing = false;
  #cached: { atMs: number; state: Promise<ReadinessState> } | undefined;

  /** `ping` resolves when the database answered, rejects otherwise. */
  constructor(
    private readonly ping: () => Promise<void>,
    private readonly opts: { cacheMs: number; timeoutMs: number } = {
      cacheMs: READINESS_CACHE_MS,
      timeoutMs: READINESS_TIMEOUT_MS,
    },
  ) {}

  /** From now on the server is not ready (SIGTERM: load balancers stop sending new work). */
  closing(): void {
    this.#closing = true;
  }

  check(): Promise<ReadinessState> {
    if (this.#closing) return Promise.resolve({ ready: false, reason: 'the server is shutting down' });
    // Wall time: a cache of an operational probe, not a billing rule (the test clock must not freeze it).
    const nowMs = Date.now();
    if (this.#cached && nowMs - this.#cached.atMs < this.opts.cacheMs) return this.#cached.state;
    const state = this.#probe();
    this.#cached = { atMs: nowMs, state };
    return state;
  }

  async #probe(): Promise<ReadinessState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.opts.timeoutMs} ms`)), this.opts.timeoutMs);
    });
    try {
      await Promise.race([this.ping(), timeout]);
      return { ready: true };
    } catch (err) {
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
      return { ready: false, reason: `the database cannot be reached: ${why}` };
    } finally {
      clearTimeout(timer);
    }
  }
}
