// A deliberately simple model of credit grants, for the property test of src/domain/grants.ts: every unit is a token
// that belongs to a grant, free or held by one hold, and every taking moves one token at a time, choosing the best
// grant by comparing a key tuple. Debt is a counter. It shares no code with the module it checks.
import type { GrantCategory, GrantSource, GrantStatus } from '../../src/domain/grants.js';

export interface RefGrant {
  id: string;
  amount: number;
  priority: number;
  category: GrantCategory;
  source: GrantSource;
  effectiveAtMs: number;
  expiresAtMs: number | null;
  voided: boolean;
  started: boolean;
  ended: boolean;
  /** One entry per unit on the balance: null when free, else the hold that holds it. */
  tokens: (number | null)[];
}

export interface RefTransaction {
  kind: string;
  amount: number;
  grantId: string | null;
  drawnFrom?: { grantId: string; amount: number }[];
}

interface RefHold {
  /** The grants of the held tokens, one entry per unit, in the order they were taken. */
  taken: string[];
  unbacked: number;
}

/** Counts per grant, in order of first appearance. */
function tally(ids: string[]): { grantId: string; amount: number }[] {
  const out: { grantId: string; amount: number }[] = [];
  for (const id of ids) {
    const last = out.find((x) => x.grantId === id);
    if (last) last.amount++;
    else out.push({ grantId: id, amount: 1 });
  }
  return out;
}

/** The drawing order as a key: smaller is drawn first. */
function key(g: RefGrant): (number | string)[] {
  return [
    g.priority,
    g.expiresAtMs ?? Number.POSITIVE_INFINITY,
    g.category === 'promotional' ? 0 : 1,
    g.effectiveAtMs,
    g.id,
  ];
}

function keyLess(a: (number | string)[], b: (number | string)[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if (a[i]! < b[i]!) return true;
    if (a[i]! > b[i]!) return false;
  }
  return false;
}

export class Reference {
  nowMs: number;
  grants: RefGrant[] = [];
  debt = 0;
  holds = new Map<number, RefHold>();
  private nextHold = 1;
  /** Transactions of the current step. */
  log: RefTransaction[] = [];

  constructor(nowMs: number) {
    this.nowMs = nowMs;
  }

  get amount(): number {
    return this.grants.reduce((s, g) => s + g.tokens.length, 0) - this.debt;
  }

  get pending(): number {
    let p = 0;
    for (const h of this.holds.values()) p += h.taken.length + h.unbacked;
    return p;
  }

  remaining(g: RefGrant): number {
    if (g.started) return g.tokens.length;
    return g.ended ? 0 : g.amount;
  }

  held(g: RefGrant): number {
    return g.tokens.filter((t) => t !== null).length;
  }

  status(g: RefGrant): GrantStatus {
    if (g.voided) return 'voided';
    if (g.expiresAtMs !== null && this.nowMs >= g.expiresAtMs) return 'expired';
    if (this.nowMs < g.effectiveAtMs) return 'scheduled';
    return this.remaining(g) === 0 ? 'depleted' : 'active';
  }

  nextExpiry(): { expiresAtMs: number; amount: number } | null {
    const free = (g: RefGrant) => g.tokens.filter((t) => t === null).length;
    const candidates = this.grants.filter((g) => g.started && !g.ended && g.expiresAtMs !== null && free(g) > 0);
    if (candidates.length === 0) return null;
    const at = Math.min(...candidates.map((g) => g.expiresAtMs!));
    const amount = candidates.filter((g) => g.expiresAtMs === at).reduce((s, g) => s + free(g), 0);
    return { expiresAtMs: at, amount };
  }

  private find(id: string): RefGrant | undefined {
    return this.grants.find((g) => g.id === id);
  }

  /** The grant whose free unit is drawn next, or null. */
  private best(): RefGrant | null {
    let best: RefGrant | null = null;
    for (const g of this.grants) {
      if (!g.started || g.ended || !g.tokens.includes(null)) continue;
      if (best === null || keyLess(key(g), key(best))) best = g;
    }
    return best;
  }

  /** Takes one free unit out of the balance; the grant's id, or null when none is left. */
  private takeOne(): string | null {
    const g = this.best();
    if (g === null) return null;
    g.tokens.splice(g.tokens.indexOf(null), 1);
    return g.id;
  }

  private repay(): void {
    while (this.debt > 0 && this.takeOne() !== null) this.debt--;
  }

  private start(g: RefGrant, kind: string): void {
    g.started = true;
    for (let i = 0; i < g.amount; i++) g.tokens.push(null);
    this.log.push({ kind, amount: g.amount, grantId: g.id });
    this.repay();
  }

  private end(g: RefGrant, kind: string): void {
    g.ended = true;
    const free = g.tokens.filter((t) => t === null).length;
    g.tokens = g.tokens.filter((t) => t !== null);
    if (free > 0) this.log.push({ kind, amount: -free, grantId: g.id });
  }

  /** Applies, one at a time, the earliest start or expiry due. */
  private catchUp(): void {
    for (;;) {
      let next: { at: number; expiry: boolean; g: RefGrant } | null = null;
      for (const g of this.grants) {
        if (g.ended) continue;
        const items: { at: number; expiry: boolean }[] = [];
        if (!g.started && g.effectiveAtMs <= this.nowMs) items.push({ at: g.effectiveAtMs, expiry: false });
        if (g.expiresAtMs !== null && g.expiresAtMs <= this.nowMs) items.push({ at: g.expiresAtMs, expiry: true });
        for (const it of items) {
          const better =
            next === null ||
            it.at < next.at ||
            (it.at === next.at && it.expiry && !next.expiry) ||
            (it.at === next.at && it.expiry === next.expiry && g.id < next.g.id);
          if (better) next = { ...it, g };
        }
      }
      if (next === null) return;
      if (next.expiry) {
        if (!next.g.started) next.g.ended = true;
        else this.end(next.g, 'grant_expiry');
      } else this.start(next.g, 'grant');
    }
  }

  private begin(): void {
    this.log = [];
    this.catchUp();
  }

  moveClock(nowMs: number): void {
    this.nowMs = nowMs;
    this.begin();
  }

  addGrant(g: Omit<RefGrant, 'voided' | 'started' | 'ended' | 'tokens'>, kind: string): void {
    this.begin();
    const grant: RefGrant = { ...g, voided: false, started: false, ended: false, tokens: [] };
    this.grants.push(grant);
    if (grant.effectiveAtMs <= this.nowMs) this.start(grant, kind);
    this.catchUp();
  }

  take(units: number, kind: string): { grantId: string; amount: number }[] {
    this.begin();
    const ids: string[] = [];
    for (let i = 0; i < units; i++) {
      const id = this.takeOne();
      if (id === null) this.debt++;
      else ids.push(id);
    }
    const drawnFrom = tally(ids);
    if (units > 0) this.log.push({ kind, amount: -units, grantId: null, drawnFrom });
    return drawnFrom;
  }

  hold(units: number): { id: number; heldFrom: { grantId: string; amount: number }[] } {
    this.begin();
    const id = this.nextHold++;
    const h: RefHold = { taken: [], unbacked: 0 };
    for (let i = 0; i < units; i++) {
      const g = this.best();
      if (g === null) h.unbacked++;
      else {
        g.tokens[g.tokens.indexOf(null)] = id;
        h.taken.push(g.id);
      }
    }
    this.holds.set(id, h);
    return { id, heldFrom: tally(h.taken) };
  }

  /** Completes (finalCost a number) or cancels (null) a hold. */
  settle(id: number, finalCost: number | null): void {
    this.begin();
    const h = this.holds.get(id)!;
    this.holds.delete(id);
    let cost = finalCost ?? 0;
    const drawn: string[] = [];
    const leaving: string[] = [];
    for (const gid of h.taken) {
      const g = this.find(gid)!;
      const i = g.tokens.indexOf(id);
      if (cost > 0) {
        g.tokens.splice(i, 1);
        drawn.push(gid);
        cost--;
      } else if (g.ended) {
        g.tokens.splice(i, 1);
        leaving.push(gid);
      } else g.tokens[i] = null;
    }
    for (; cost > 0; cost--) {
      const gid = this.takeOne();
      if (gid === null) this.debt++;
      else drawn.push(gid);
    }
    if (finalCost !== null && finalCost > 0)
      this.log.push({ kind: 'usage', amount: -finalCost, grantId: null, drawnFrom: tally(drawn) });
    for (const { grantId, amount } of tally(leaving)) {
      const kind = this.find(grantId)!.voided ? 'grant_void' : 'grant_expiry';
      this.log.push({ kind, amount: -amount, grantId });
    }
    this.repay();
  }

  /** The refusal reason, or null when the grant may be changed. */
  private refusal(id: string, allowVoided: boolean): string | null {
    const g = this.find(id);
    if (!g) return 'not_found';
    const s = this.status(g);
    if (s === 'expired') return 'grant_expired';
    if (s === 'depleted') return 'grant_depleted';
    if (s === 'voided' && !allowVoided) return 'grant_voided';
    return null;
  }

  voidGrant(id: string): string | null {
    this.begin();
    const r = this.refusal(id, true);
    if (r !== null) return r;
    const g = this.find(id)!;
    if (!g.voided) {
      g.voided = true;
      if (g.started) this.end(g, 'grant_void');
      else g.ended = true;
    }
    return null;
  }

  patch(id: string, p: { priority?: number; expiresAtMs?: number | null }): string | null {
    this.begin();
    const r = this.refusal(id, false);
    if (r !== null) return r;
    const g = this.find(id)!;
    if (p.expiresAtMs !== undefined && p.expiresAtMs !== null && p.expiresAtMs <= g.effectiveAtMs)
      return 'expires_at_must_be_after_effective_at';
    if (p.priority !== undefined) g.priority = p.priority;
    if (p.expiresAtMs !== undefined) g.expiresAtMs = p.expiresAtMs;
    this.catchUp();
    return null;
  }
}
