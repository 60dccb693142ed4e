/**
 * Instants as the API spells them: RFC 3339 date-times (`2026-11-23T10:00:00Z`,
 * `2026-11-23T11:00:00.250+01:00`), parsed strictly (no `Date.parse` leniency: no bare dates,
 * no impossible days, no missing offset), to epoch milliseconds; and the UTC calendar periods
 * usage is counted in.
 */

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Epoch milliseconds of an RFC 3339 date-time (fractions below a millisecond dropped), or null. */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo) - 1;
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month > 11 || hour > 23 || minute > 59 || second > 59) return null;
  const local = Date.UTC(year, month, day, hour, minute, second);
  const check = new Date(local);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month || check.getUTCDate() !== day) return null;
  let offsetMinutes = 0;
  if (sign !== undefined) {
    if (Number(oh) > 23 || Number(om) > 59) return null;
    offsetMinutes = (Number(oh) * 60 + Number(om)) * (sign === '-' ? -1 : 1);
  }
  const ms = frac === undefined ? 0 : Number(frac.padEnd(3, '0').slice(0, 3));
  return local + ms - offsetMinutes * 60_000;
}

/** The start of the UTC day holding `ms`. */
export function dayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** The start of the UTC calendar month holding `ms`. */
export function monthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The start of the UTC calendar month after the one holding `ms`. */
export function nextMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
