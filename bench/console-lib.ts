/** Small helpers of bench/console.ts. */
export function assertOk(r: { status: number; text: string }): void {
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text}`);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}
