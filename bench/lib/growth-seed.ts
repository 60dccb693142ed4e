/**
 * Seeding for the growth bench, through the engine's public interface only (lib/engine.ts):
 * accounts with a funded balance, then a stored history of complete events with their ledger
 * rows, written in transactions of `chunkRows` rows while the server is stopped (HTTP would
 * take hours for ten million events). The rows are the server's own: ids from its id
 * function, accounts and grants as the API writes them, events as the events route plans
 * them, ledger rows chained from each balance (engine.ts, `planUsage`).
 *
 * What the history looks like:
 * - account 0 is the "big" account (the list endpoints' subject, never in the load); accounts
 *   1 … N are the spread accounts (spread index n = account − 1), created in that order;
 * - each balance holds `grants` credit grants: the initial one (INITIAL_GRANT units, never
 *   expires) and `grants − 1` of 500–5,000 units expiring over the next 60 days, drawn first
 *   (lib/grants.ts `growthGrants`), written with the account in the same posting (grant rows,
 *   `grant` transactions, the balance's live lots);
 * - the seeded history draws its units from those grants as the events route would (in
 *   drawing order, `applyBalanceChanges`), so that `amount` = Σ `remaining` − debt holds; its
 *   `usage` rows carry no `drawn_from`;
 * - the events of a level go round robin over the spread accounts, interleaved with the big
 *   account's: it gets `bigAccountTransactions` events at the first level that adds at least
 *   that many, spread evenly through that level, so its history lies through the tables as a
 *   busy account's would;
 * - with features (lib/entitlements.ts, created through the API first): every account is on one of the
 *   plans, round robin (`plan_id` and its plan periods), and every n-th has an override or two;
 * - costs vary with the account and the event's rank on it (1 … 18 units), so that a unit lost
 *   or counted twice shows; the seeder adds up what each account's history cost (`seededCost`);
 * - events happened over the USAGE_SPAN_DAYS before the level was seeded (their `timestamp`,
 *   rising with their rank in the level: the big account's span every hour), and the usage
 *   rollups get what the ingest path would have added for them (`usageOf`, `Tx.addUsage`, in the
 *   events' transaction), so that the usage endpoints answer for the whole history;
 * - a level's chains continue from the balances as the previous level's load left them (read
 *   first), and each balance changes once at the end of the level, by what its new events cost
 *   (the server changes it with every group): between two levels the ledger is exact.
 *
 * PostgreSQL writes events and ledger rows on two connections at once (one backend per core)
 * while this process plans the next chunk; the ledger rows are written in order, so that their
 * `seq` keeps each account's chain. SQLite has one writer: the same chunks, one after the other.
 */
import {
  applyBalanceChanges,
  newId,
  planUsage,
  seedFundedAccounts,
  type PlannedUsage,
  type SeedOverride,
  type Store,
  type UsageEvent,
  usageOf,
  portOf,
} from './engine.js';
import { type BenchOverride, type GrowthCatalogue, growthOverrides, growthPlanOf } from './entitlements.js';
import { growthExtraUnits, growthGrants } from './grants.js';
import { bigAt } from './growth-options.js';
import { DENOMINATION, EVENT_TYPE, INITIAL_GRANT } from './options.js';

/** Cost of the big account's events: BIG_ACCOUNT_BASE_COST, +1 on every other one. */
const BIG_ACCOUNT_BASE_COST = 5;
/** Spread accounts' event costs: 1 + (index mod COST_SPREAD), +1 on every other event of the account. */
const COST_SPREAD = 17;
/** Connections that write accounts at once on PostgreSQL: two statements per account, so round trips bound it. */
const POSTGRES_ACCOUNT_LANES = 4;
/** Seeded events happened over this many days before their level was seeded. */
export const USAGE_SPAN_DAYS = 30;
const DAY_MS = 86_400_000;
/** Events planned between two turns of the event loop (a chunk's writes progress meanwhile). */
const PLAN_SLICE_ROWS = 2_000;

/** The plans accounts are seeded on, and their overrides (lib/entitlements.ts). */
export interface SeedEntitlements {
  /** The ids of the catalogue's plans, in its order. */
  planIds: readonly string[];
  catalogue: GrowthCatalogue;
  overrideEvery: number;
}

/** An override as the store keeps it: its value as JSON text, its end as an instant. */
export function seedOverride(o: BenchOverride, nowMs: number): SeedOverride {
  return {
    feature: o.feature,
    enabled: o.enabled,
    value: o.value === undefined ? null : JSON.stringify(o.value),
    expiresAtMs: o.expiresInDays === undefined ? null : nowMs + o.expiresInDays * DAY_MS,
  };
}

/** One seeding step and how long it took. */
export interface SeedTiming {
  level: string;
  what: string;
  rows: number;
  seconds: number;
}

export const SEED_ACCOUNTS = 'accounts + balances + grants';
export const SEED_EVENTS = 'events + usage transactions + usage rollups';
export const SEED_READ = 'balances read (the new chains continue from them)';
export const SEED_BALANCES = 'balances changed by the seeded events';
/** SQLite: the WAL checkpoint of closing the store; PostgreSQL: VACUUM (ANALYZE). */
export const SEED_SETTLE = 'store closed, WAL checkpoint or VACUUM (ANALYZE)';

/** Runs `work(i)` for i = 0 … count − 1, at most `lanes` at once, in order of i. */
async function inLanes(count: number, lanes: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, count) }, lane));
}

/** A uniform sample of at most `size` of the items offered (reservoir sampling). */
class Sample {
  readonly items: string[] = [];
  private seen = 0;
  constructor(private readonly size: number) {}
  offer(item: string): void {
    this.seen++;
    if (this.items.length < this.size) this.items.push(item);
    else {
      const slot = Math.floor(Math.random() * this.seen);
      if (slot < this.size) this.items[slot] = item;
    }
  }
}

/** Lets the event loop run (a write's round trips) in the middle of planning a chunk. */
const yieldToWrites = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The seeded state of one store, and the steps that grow it. */
export class Seeder {
  /** Account 0 is the big account; 1 … N the spread accounts. */
  private readonly accounts: string[] = [];
  /** Each account's amount with every event planned so far (read from the store at each level's start). */
  private amounts: Float64Array = new Float64Array(0);
  /** Units each account's seeded history took. */
  private costs: Float64Array = new Float64Array(0);
  /** Events seeded so far. */
  seededEvents = 0;
  private bigEvents = 0;
  /** Stored events picked at random (for `GET /v1/events/{id}` and its plan). */
  private readonly events: Sample;
  readonly timings: SeedTiming[] = [];
  /** Plans and overrides of the accounts seeded from now on; none when undefined. */
  entitlements: SeedEntitlements | undefined;
  /** Feature overrides seeded so far. */
  seededOverrides = 0;

  constructor(
    private readonly companyId: string,
    private readonly chunkRows: number,
    private readonly bigAccountTransactions: number,
    eventSample: number,
    private readonly log: (message: string) => void,
    /** Credit grants each balance holds: the initial one, and `grants − 1` expiring ones (lib/grants.ts). */
    readonly grants = 1,
  ) {
    this.events = new Sample(eventSample);
  }

  /** Grant rows seeded so far (every account's initial grant and the others). */
  get seededGrants(): number {
    return this.accounts.length * this.grants;
  }

  /** Units granted to account `index` (0: the big account; spread index n is n + 1) when it was seeded. */
  granted(index: number): number {
    return INITIAL_GRANT + growthExtraUnits(index, this.grants);
  }

  get bigAccountId(): string | undefined {
    return this.accounts[0];
  }

  /** Spread accounts seeded. */
  get spreadAccounts(): number {
    return Math.max(0, this.accounts.length - 1);
  }

  /** Spread account ids in spread-index order. */
  population(): string[] {
    return this.accounts.slice(1);
  }

  /** Stored event ids picked at random among everything seeded. */
  sampledEvents(): string[] {
    return [...this.events.items];
  }

  /** Units the seeded history took from spread account `index` (0-based). */
  seededCost(index: number): number {
    return this.costs[index + 1] ?? 0;
  }

  /** Units the seeded history took from the big account. */
  bigSeededCost(): number {
    return this.costs[0] ?? 0;
  }

  /** Usage transactions seeded on the big account. */
  bigSeededTransactions(): number {
    return this.bigEvents;
  }

  async timed(level: string, what: string, rows: number, work: () => Promise<unknown>): Promise<void> {
    const started = performance.now();
    await work();
    const seconds = (performance.now() - started) / 1000;
    this.timings.push({ level, what, rows, seconds });
    const rate = rows > 0 && seconds > 0 ? `, ${Math.round(rows / seconds).toLocaleString('en-US')} rows/s` : '';
    this.log(`seed ${level}: ${what}: ${rows.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s${rate}`);
  }

  /** Logs progress about every 10 % of `total`. */
  private progress(level: string, what: string, total: number): (done: number) => void {
    const started = performance.now();
    const step = Math.max(this.chunkRows, Math.ceil(total / 10));
    let logged = 0;
    return (done) => {
      if (done - logged < step && done < total) return;
      logged = done;
      const seconds = (performance.now() - started) / 1000;
      this.log(
        `seed ${level}: ${what}: ${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} rows in ` +
          `${seconds.toFixed(1)} s, ${Math.round(done / seconds).toLocaleString('en-US')} rows/s`,
      );
    };
  }

  /**
   * Grows the spread accounts to `target` (the big account first), each funded with INITIAL_GRANT
   * and its `grants − 1` expiring grants.
   */
  async seedAccounts(store: Store, target: number, level: string): Promise<void> {
    const from = this.accounts.length;
    const to = target + 1; // account indexes, exclusive
    if (to <= from) return;
    const grow = (old: Float64Array): Float64Array => {
      const grown = new Float64Array(to);
      grown.set(old);
      return grown;
    };
    this.amounts = grow(this.amounts);
    this.costs = grow(this.costs);
    for (let i = from; i < to; i++) this.accounts.push(newId('a'));
    if (this.grants > 1)
      this.log(`seed ${level}: ${this.grants} grants per account (${(to - from) * this.grants} grant rows)`);
    const report = this.progress(level, SEED_ACCOUNTS, to - from);
    let done = 0;
    const ent = this.entitlements;
    const write = async (start: number, end: number): Promise<void> => {
      const ids = this.accounts.slice(start, end);
      const nowMs = Date.now();
      let overrides = 0;
      await store.write((tx) =>
        seedFundedAccounts(tx, this.companyId, ids, DENOMINATION, INITIAL_GRANT, {
          nowMs,
          grants: (_accountId, i) => growthGrants(start + i, this.grants, nowMs),
          ...(ent === undefined || ent.planIds.length === 0
            ? {}
            : { plan: (_accountId: string, i: number) => ent.planIds[growthPlanOf(start + i, ent.planIds.length)] }),
          ...(ent === undefined
            ? {}
            : {
                overrides: (_accountId: string, i: number) => {
                  const rows = growthOverrides(start + i, ent.overrideEvery, ent.catalogue);
                  overrides += rows.length;
                  return rows.map((o) => seedOverride(o, nowMs));
                },
              }),
        }),
      );
      this.seededOverrides += overrides;
      done += end - start;
      report(done);
    };
    await this.timed(level, SEED_ACCOUNTS, to - from, async () => {
      let first = from;
      if (from === 0) {
        await write(0, 1); // the big account alone: the company's oldest
        first = 1;
      }
      const lanes = store.dialect === 'postgres' ? POSTGRES_ACCOUNT_LANES : 1;
      await inLanes(Math.ceil((to - first) / this.chunkRows), lanes, (c) =>
        write(first + c * this.chunkRows, Math.min(to, first + (c + 1) * this.chunkRows)),
      );
    });
  }

  /** Reads the amounts of chunk `c` of the accounts' balances into `amounts`. */
  private async readAmounts(store: Store, c: number): Promise<void> {
    const ids = this.accounts.slice(c * this.chunkRows, (c + 1) * this.chunkRows);
    const balances = await store.read((tx) => portOf(tx).listBalancesOfAccounts(ids));
    const balanceOf = new Map(balances.filter((b) => b.denomination === DENOMINATION).map((b) => [b.accountId, b]));
    for (const [k, id] of ids.entries()) {
      const balance = balanceOf.get(id);
      if (balance === undefined) throw new Error(`seeded account ${id} has no ${DENOMINATION} balance`);
      this.amounts[c * this.chunkRows + k] = balance.amount;
    }
  }

  /**
   * Grows the stored events to `target`: events and their usage transactions, interleaved
   * between the spread accounts (round robin) and, at the first level that can hold them, the
   * big account's; then every balance they touched changes by what they cost.
   */
  async seedEvents(store: Store, target: number, level: string): Promise<void> {
    const total = target - this.seededEvents;
    if (total <= 0) return;
    const big = bigAt(this.bigAccountTransactions, this.bigEvents > 0, total);
    const population = this.spreadAccounts;
    if (total - big > 0 && population === 0) throw new Error('events need accounts to be spread over');
    if (this.bigAccountId === undefined) throw new Error('the big account is created with the first accounts');
    const spreadBefore = this.seededEvents - this.bigEvents;
    const bigBefore = this.bigEvents;
    const p = Math.max(1, population);
    const touched = new Uint8Array(this.accounts.length);
    // The chains continue from the balances as they are: the load of earlier levels changed them.
    const lanes = store.dialect === 'postgres' ? POSTGRES_ACCOUNT_LANES : 1;
    await this.timed(level, SEED_READ, this.accounts.length, () =>
      inLanes(Math.ceil(this.accounts.length / this.chunkRows), lanes, (c) => this.readAmounts(store, c)),
    );
    const before = Float64Array.from(this.amounts);
    // Row j happened at spanStart + j·span/total: the level's history fills the span evenly.
    const spanMs = USAGE_SPAN_DAYS * DAY_MS;
    const spanStart = Date.now() - spanMs;

    // Rows [start, end) of this level. Row j is the big account's when ⌊(j+1)·B/T⌋ moves past
    // kb = ⌊j·B/T⌋ (its rank among the big rows); else it goes to the next spread account.
    const plan = async (start: number, end: number): Promise<PlannedUsage> => {
      const planned: PlannedUsage = { events: [], transactions: [] };
      for (let slice = start; slice < end; slice += PLAN_SLICE_ROWS) {
        const events: UsageEvent[] = [];
        const indexes = new Map<string, number>();
        const amounts = new Map<string, number>();
        for (let j = slice; j < Math.min(end, slice + PLAN_SLICE_ROWS); j++) {
          const kb = Math.floor((j * big) / total);
          let index: number;
          let cost: number;
          if (Math.floor(((j + 1) * big) / total) > kb) {
            index = 0;
            cost = BIG_ACCOUNT_BASE_COST + ((bigBefore + kb) % 2);
          } else {
            const s = spreadBefore + j - kb; // rank among every spread event seeded
            const n = s % p;
            index = 1 + n;
            cost = 1 + (n % COST_SPREAD) + (Math.floor(s / p) % 2);
          }
          const accountId = this.accounts[index] as string;
          events.push({ accountId, type: EVENT_TYPE, cost, denomination: DENOMINATION });
          (this.costs[index] as number) += cost;
          if (!indexes.has(accountId)) {
            indexes.set(accountId, index);
            amounts.set(accountId, this.amounts[index] as number);
          }
        }
        const rows = planUsage(this.companyId, events, amounts);
        for (const [accountId, index] of indexes) {
          this.amounts[index] = amounts.get(accountId) as number;
          touched[index] = 1;
        }
        for (const [k, e] of rows.events.entries()) {
          e.occurredAtMs = spanStart + Math.floor(((slice + k) * spanMs) / total);
          planned.events.push(e);
          this.events.offer(e.eventId);
        }
        for (const t of rows.transactions) planned.transactions.push(t);
        await yieldToWrites();
      }
      return planned;
    };

    // Ledger rows go in in order (their seq keeps each account's chain); on PostgreSQL the events
    // go in on a second connection meanwhile, and the next chunk is planned while both write.
    // The rollups of a chunk go in with its events (one chunk is written at a time: no two
    // transactions add to one rollup row at once).
    const write = async (planned: PlannedUsage): Promise<void> => {
      const usage = usageOf(planned.events);
      if (store.dialect === 'postgres') {
        await Promise.all([
          store.write(async (tx) => {
            await portOf(tx).writeLedger(planned.events, [], []);
            await portOf(tx).writeLedger([], [], [], usage);
          }),
          store.write((tx) => portOf(tx).writeLedger([], [], planned.transactions)),
        ]);
      } else {
        await store.write(async (tx) => {
          await portOf(tx).writeLedger(planned.events, [], []);
          await portOf(tx).writeLedger([], [], planned.transactions);
          await portOf(tx).writeLedger([], [], [], usage);
        });
      }
    };
    const report = this.progress(level, SEED_EVENTS, total);
    await this.timed(level, SEED_EVENTS, total, async () => {
      let writing: Promise<void> | undefined;
      for (let start = 0; start < total; start += this.chunkRows) {
        const end = Math.min(total, start + this.chunkRows);
        const planned = await plan(start, end);
        await writing;
        writing = write(planned).then(() => report(end));
        writing.catch(() => undefined); // awaited above, before the next chunk; not unhandled meanwhile
      }
      await writing;
    });
    this.bigEvents += big;
    this.seededEvents = target;

    const changes: { accountId: string; amount: number; expected: number }[] = [];
    for (const [index, accountId] of this.accounts.entries()) {
      if (touched[index] !== 1) continue;
      const amount = this.amounts[index] as number;
      changes.push({ accountId, amount: amount - (before[index] as number), expected: amount });
    }
    await this.timed(level, SEED_BALANCES, changes.length, () =>
      inLanes(Math.ceil(changes.length / this.chunkRows), lanes, (c) => {
        const chunk = changes.slice(c * this.chunkRows, (c + 1) * this.chunkRows);
        return store.write((tx) => applyBalanceChanges(tx, DENOMINATION, chunk));
      }),
    );
  }
}
