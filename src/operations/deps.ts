import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/types.js';

/** What every operation may use: the store interface and the injected clock. */
export interface Deps {
  store: Store;
  clock: Clock;
}

/** Default and largest page of every list endpoint. */
export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;
