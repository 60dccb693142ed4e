/**
 * Reading a V8 `.cpuprofile` (what `node --cpu-prof` writes): the time of each sample, cut to a window (a
 * phase of phases.json), the functions with the most self time, and the time per stage of a request.
 *
 * A sample's time runs from its timestamp to the next sample's (the last one's to `endTime`), as Chrome's
 * DevTools count it; a window keeps the part of each sample's time that falls inside it. Timestamps are
 * `startTime` plus the running sum of `timeDeltas`, in µs of the monotonic clock (see cpuprof.ts).
 *
 * Stages: each sample is charged to the stage of the innermost frame of its stack that a STRONG rule of
 * STAGE_RULES classifies, walking up from the leaf, so that a native or anonymous leaf (a socket write, a
 * JSON.parse, a hash) goes to whatever called it. Frames that only a WEAK rule classifies (Node's sockets and
 * streams, crypto, worker messaging) count only when no frame of the stack is classified by a strong rule.
 * Nothing classified: `other`.
 */

/**
 * One frame as V8 names it. `url` is empty for natives and for code made by `new Function` (Ajv,
 * fast-json-stringify).
 */
export interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
  columnNumber?: number;
  scriptId?: string | number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
  hitCount?: number;
}

/** A `.cpuprofile` file: the call tree, and the samples (leaf node ids) with the µs between them. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** µs on the profile's clock; `end` excluded. */
export interface TimeWindow {
  startUs: number;
  endUs: number;
}

/** The stages, in the order a request meets them; the table prints them in this order. */
export const STAGES = [
  'http+json',
  'fastify',
  'auth',
  'idempotency',
  'validation',
  'handlers',
  'domain',
  'ingest',
  'store',
  'driver',
  'statements',
  'rollups',
  'answer',
  'logs+metrics',
  'gc',
  'idle',
  'other',
] as const;
export type Stage = (typeof STAGES)[number];

/** What each stage covers, printed under the table. */
export const STAGE_NOTES: Readonly<Record<Stage, string>> = {
  'http+json': "Node's HTTP server and parser, sockets and streams, the JSON body parse (secure-json-parse)",
  fastify: "Fastify's routing and hooks (find-my-way, avvio, …) and the server's own hooks in src/http/",
  auth: 'src/http/auth, src/operations/identity, password/key hashing (crypto called from them)',
  idempotency: 'src/{http,operations,store}/idempotency*',
  validation: "Ajv's generated validate functions, Ajv, Fastify's validation, src/http/validation and schemas",
  handlers: 'route handlers (src/http/routes/) and operations (src/operations/)',
  domain: 'pricing, ledger and grants: src/domain/, src/ledger/',
  ingest: "the ingest group commit: src/ingest/ (batching, the writer thread's messages)",
  store: 'src/store/ outside SQLite: SQL text, parameters, rows (PostgreSQL runs the statements itself)',
  driver: "node_modules/pg* and their type parsers, better-sqlite3's JS outside its statement calls",
  statements:
    "SQLite's statements (better-sqlite3's native calls, charged by V8 to the JS calling them: src/store/sqlite*, " +
    "better-sqlite3's wrappers such as exec for BEGIN/COMMIT), PostgreSQL's wire protocol (pg-protocol)",
  rollups: 'usage rollups: src/domain/usage, src/store/usage/, src/store/*/usage',
  answer: "the answer: Fastify's reply and serialisation (fast-json-stringify's generated code), errors",
  'logs+metrics': 'pino (request logs), prom-client and src/http/metrics',
  gc: "V8's garbage collector (on this thread)",
  idle: 'the thread waiting for work (its event loop idle)',
  other: "anything else: V8's (program), timers and ticks at the top of the stack, module loading",
};

export interface StageRule {
  stage: Stage;
  /** Tested against the frame's url with the repository root removed (`dist/http/auth.js`, `node:net`). */
  url?: RegExp;
  /** Tested against the function name. A rule with both needs both. */
  fn?: RegExp;
  /** Only counts when no frame of the stack is classified by a strong rule. */
  weak?: true;
}

/** The compiled server (dist/) or its sources (a `.ts` server run through tsx). */
const OURS = '(?:^|/)(?:src|dist)/';
const ours = (path: string): RegExp => new RegExp(`${OURS}${path}`);
const modules = (names: string): RegExp => new RegExp(`(?:^|/)node_modules/(?:${names})/`);

/**
 * The rules, tried in order on each frame: the first that matches classifies it. Specific rules come before
 * the general ones of the same place (Fastify's reply before Fastify, src/http/auth before src/http/).
 */
export const STAGE_RULES: readonly StageRule[] = [
  { stage: 'gc', fn: /^\(garbage collector\)$/ },
  { stage: 'idle', fn: /^\(idle\)$/ },
  { stage: 'other', fn: /^\(program\)$/ },
  // Code Ajv compiles with new Function: no url, named validate<n>.
  { stage: 'validation', url: /^$/, fn: /^validate\d*$/ },
  { stage: 'validation', url: modules('ajv|ajv-formats|@fastify/ajv-compiler|fast-uri|json-schema-traverse') },
  { stage: 'validation', url: /node_modules\/fastify\/lib\/(?:validation|schemas|schema-controller)\.js$/ },
  { stage: 'validation', url: ours('http/(?:validation|schemas/)') },
  {
    stage: 'answer',
    url: modules('fast-json-stringify|@fastify/fast-json-stringify-compiler|json-schema-ref-resolver'),
  },
  { stage: 'answer', url: /node_modules\/fastify\/lib\/(?:reply|error-serializer|error-handler|error-status)\.js$/ },
  { stage: 'answer', url: ours('http/errors\\.') },
  {
    stage: 'logs+metrics',
    url: modules('pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|prom-client'),
  },
  { stage: 'logs+metrics', url: /node_modules\/fastify\/lib\/logger[\w-]*\.js$/ },
  { stage: 'logs+metrics', url: ours('http/metrics\\.') },
  { stage: 'http+json', url: /^node:_http_|^node:https?$/ },
  { stage: 'http+json', url: modules('secure-json-parse') },
  { stage: 'http+json', url: ours('http/(?:json-body|connections?|listener)\\.') },
  { stage: 'idempotency', url: ours('(?:http|operations|store)/idempotency') },
  { stage: 'auth', url: ours('(?:http/auth|operations/identity|lib/password|lib/keys)\\.') },
  { stage: 'handlers', url: ours('(?:http/routes|operations)/') },
  { stage: 'rollups', url: ours('(?:domain/usage\\.|store/usage/|store/(?:sqlite|postgres)/usage\\.)') },
  { stage: 'domain', url: ours('(?:domain|ledger)/') },
  { stage: 'ingest', url: ours('ingest/') },
  // V8 shows no frame for better-sqlite3's native functions: their time is the self time of the JS calling them.
  { stage: 'statements', url: /node_modules\/better-sqlite3\/lib\/methods\/wrappers\.js$/ },
  { stage: 'statements', url: ours('store/sqlite(?:/|\\.)') },
  { stage: 'statements', url: modules('pg-protocol') },
  { stage: 'driver', url: modules('pg|pg-pool|pg-types|pg-int8|pg-connection-string|pgpass|postgres-[\\w-]+') },
  { stage: 'driver', url: modules('better-sqlite3|bindings|file-uri-to-path') },
  { stage: 'store', url: ours('store/') },
  { stage: 'fastify', url: modules('fastify|find-my-way|avvio|@fastify/[\\w-]+|fastify-plugin|light-my-request') },
  { stage: 'fastify', url: modules('toad-cache|fast-querystring|rfdc|process-warning|abstract-logging') },
  { stage: 'fastify', url: ours('http/') },
  // Weak: whose sockets, hashes and messages these are is said by the frames above them, when any says.
  { stage: 'http+json', url: /^node:(?:net|stream|internal\/stream_base_commons|internal\/streams\/)/, weak: true },
  { stage: 'auth', url: /^node:(?:crypto|internal\/crypto\/)/, weak: true },
  { stage: 'ingest', url: /^node:(?:worker_threads|internal\/worker|internal\/per_context\/messageport)/, weak: true },
];

/** A profile's url as the rules see it: `file:///…/repo/dist/x.js` → `dist/x.js`; node: and empty urls as they are. */
export function shortUrl(url: string, root?: string): string {
  let u = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  if (root !== undefined && u.startsWith(`${root}/`)) u = u.slice(root.length + 1);
  return u;
}

function matches(rule: StageRule, frame: CallFrame, url: string): boolean {
  return (rule.url === undefined || rule.url.test(url)) && (rule.fn === undefined || rule.fn.test(frame.functionName));
}

/** The first rule matching one frame, or undefined. */
export function ruleFor(frame: CallFrame, rules: readonly StageRule[] = STAGE_RULES): StageRule | undefined {
  const url = shortUrl(frame.url);
  return rules.find((rule) => matches(rule, frame, url));
}

/** The stage of a stack given leaf first: the innermost frame a strong rule classifies, else a weak one's. */
export function stageOfStack(leafFirst: readonly CallFrame[], rules: readonly StageRule[] = STAGE_RULES): Stage {
  let weak: Stage | undefined;
  for (const frame of leafFirst) {
    const rule = ruleFor(frame, rules);
    if (rule === undefined) continue;
    if (!rule.weak) return rule.stage;
    weak ??= rule.stage;
  }
  return weak ?? 'other';
}

/** Sample timestamps (µs): `startTime` plus the running sum of `timeDeltas`. */
export function sampleTimestamps(profile: CpuProfile): number[] {
  const deltas = profile.timeDeltas ?? [];
  const out: number[] = [];
  let t = profile.startTime;
  for (let i = 0; i < (profile.samples ?? []).length; i++) {
    t += deltas[i] ?? 0;
    out.push(t);
  }
  return out;
}

export interface SelfTimes {
  /** µs of self time per node id, inside the window. */
  byNode: Map<number, number>;
  /** Σ of byNode: the sampled time inside the window. */
  totalUs: number;
  /** The window's length (the whole profile's when none was given). */
  windowUs: number;
  samples: number;
}

/**
 * Self time per node: each sample's time (to the next sample, the last to `endTime`), the part inside `window`
 * when one is given.
 */
export function selfTimes(profile: CpuProfile, window?: TimeWindow): SelfTimes {
  const samples = profile.samples ?? [];
  const stamps = sampleTimestamps(profile);
  const from = window?.startUs ?? profile.startTime;
  const to = window?.endUs ?? profile.endTime;
  const byNode = new Map<number, number>();
  let totalUs = 0;
  let counted = 0;
  for (let i = 0; i < samples.length; i++) {
    const start = stamps[i] as number;
    const end = Math.max(start, i + 1 < stamps.length ? (stamps[i + 1] as number) : profile.endTime);
    const us = Math.min(end, to) - Math.max(start, from);
    if (us <= 0) continue;
    const node = samples[i] as number;
    byNode.set(node, (byNode.get(node) ?? 0) + us);
    totalUs += us;
    counted++;
  }
  return { byNode, totalUs, windowUs: Math.max(0, to - from), samples: counted };
}

/** Each node's parent id. */
function parents(profile: CpuProfile): Map<number, number> {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  return parent;
}

/** The stage of every node, from its stack (itself, then its callers up to the root). */
export function nodeStages(profile: CpuProfile, rules: readonly StageRule[] = STAGE_RULES): Map<number, Stage> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = parents(profile);
  const stages = new Map<number, Stage>();
  for (const node of profile.nodes) {
    const stack: CallFrame[] = [];
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id);
      if (n !== undefined) stack.push(n.callFrame);
    }
    stages.set(node.id, stageOfStack(stack, rules));
  }
  return stages;
}

/** µs per stage in the window, every stage present (0 when none). */
export function stageTimes(profile: CpuProfile, window?: TimeWindow): Map<Stage, number> {
  const { byNode } = selfTimes(profile, window);
  const stages = nodeStages(profile);
  const out = new Map<Stage, number>(STAGES.map((s) => [s, 0]));
  for (const [node, us] of byNode) {
    const stage = stages.get(node) ?? 'other';
    out.set(stage, (out.get(stage) ?? 0) + us);
  }
  return out;
}

export interface FrameTime {
  functionName: string;
  /** `dist/http/auth.js:71` (1-based), `node:net:927`, or `(native)`. */
  location: string;
  stage: Stage;
  selfUs: number;
}

/** Self time per function (same name and place, whatever its callers), most first. */
export function topFrames(profile: CpuProfile, window?: TimeWindow, root?: string): FrameTime[] {
  const { byNode } = selfTimes(profile, window);
  const stages = nodeStages(profile);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const frames = new Map<string, FrameTime>();
  for (const [id, us] of byNode) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const location = url === '' ? '(native)' : `${shortUrl(url, root)}:${lineNumber + 1}`;
    const stage = stages.get(id) ?? 'other';
    // Natives are told apart by their caller's stage: a socket write for HTTP, another for PostgreSQL.
    const key = `${functionName}\0${location}\0${url === '' ? stage : ''}`;
    const f = frames.get(key);
    if (f === undefined) frames.set(key, { functionName: functionName || '(anonymous)', location, stage, selfUs: us });
    else f.selfUs += us;
  }
  return [...frames.values()].sort((a, b) => b.selfUs - a.selfUs);
}

/** Whether a window lies inside the profile's span (else its clock is not the profile's, or another run's). */
export function windowInside(profile: CpuProfile, window: TimeWindow): boolean {
  return window.startUs >= profile.startTime && window.endUs <= profile.endTime && window.endUs > window.startUs;
}
