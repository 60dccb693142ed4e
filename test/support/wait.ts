/**
 * Waiting for a condition, never for a time: `until` polls a check until it holds. Its bound is a number of
 * attempts, each at least `everyMs` apart, so a loaded machine makes a wait longer, never wrong: it fails (naming
 * what it waited for) only when the condition still does not hold after all of them.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface UntilOptions {
  /** The pause between two attempts (default 20 ms). */
  everyMs?: number;
  /** How many attempts before giving up (default 1,000: at least 20 s at the default pause). */
  attempts?: number;
}

/** Resolves with the first truthy value `check` returns; throws `never: what` after the last attempt. */
export async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  opts: UntilOptions = {},
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const attempts = opts.attempts ?? 1_000;
  const everyMs = opts.everyMs ?? 20;
  for (let i = 0; i < attempts; i++) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    await sleep(everyMs);
  }
  throw new Error(`never: ${what} (${attempts} attempts, ${everyMs} ms apart)`);
}
