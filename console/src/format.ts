/** Numbers, money and dates as a person reads them. */
const int = new Intl.NumberFormat('en-US');
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

export const units = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : int.format(n));
export const cents = (n: number | string | null | undefined): string =>
  n === null || n === undefined ? '—' : usd.format(Number(n) / 100);

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 19)} UTC`;
}
export const day = (iso: string): string => iso.slice(0, 10);

const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
/** A usage period ending after the current hour: [start of the day `days` ago, next whole hour + 1 h). */
export function usagePeriod(days: number, now = Date.now()): { from: string; to: string } {
  const to = Math.floor(now / HOUR) * HOUR + 2 * HOUR;
  const from = Math.floor(now / DAY) * DAY - (days - 1) * DAY;
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}

/** CSV with every field quoted where needed (RFC 4180). */
export function toCsv(rows: (string | number)[][]): string {
  return rows
    .map((r) => r.map((v) => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v))).join(','))
    .join('\r\n');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** A day as people write it, in UTC: "1 Dec 2026", with the time when it is not midnight ("1 Dec 2026, 14:30 UTC"). */
export function date(iso: string): string {
  const d = new Date(iso);
  const text = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  const hm = d.toISOString().slice(11, 16);
  return hm === '00:00' ? text : `${text}, ${hm} UTC`;
}

/** A grant id made short enough for a table cell: its random end is what tells two apart. */
export const shortId = (id: string): string => (id.length > 12 ? `${id.slice(0, 2)}…${id.slice(-6)}` : id);
