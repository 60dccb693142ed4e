/**
 * Credit packs and their purchase (contract "Customer portal, top-ups and receipts"): the limits of an offer and
 * when the grant a purchase adds expires. Pure: no I/O, no clock.
 */
import { DAY_MS } from './time.js';

/** Offers a company may keep. */
export const TOPUP_OFFERS_MAX = 100;
/** The longest validity an offer may give its grants (ten years). */
export const TOPUP_EXPIRES_IN_DAYS_MAX = 3_650;

/** When the grant of a purchase made at `nowMs` expires: `expiresInDays` days later, or never (null). */
export function topupExpiresAt(expiresInDays: number | null, nowMs: number): number | null {
  return expiresInDays === null ? null : nowMs + expiresInDays * DAY_MS;
}
