/** Messages between the main thread and the SQLite ingest writer thread. */
import type { IngestRequest } from '../domain/events.js';
import type { Failure, Outcome } from '../domain/outcome.js';
import type { EventRow } from '../store/types.js';
import type { IngestResult } from '../ledger/ingest.js';
import type { SettleRequest } from '../operations/events.js';

export interface WorkerInit {
  /** URL of writer-thread-main.ts or .js (read by boot-tsx.mjs). */
  entry: string;
  filename: string;
}

/** What the thread applies, one group per transaction. */
export interface GroupKinds {
  ingest: { request: IngestRequest; outcome: Outcome<IngestResult> };
  settle: { request: SettleRequest; outcome: Outcome<EventRow> };
}
export type GroupKind = keyof GroupKinds;

export interface GroupRequest {
  id: number;
  kind: GroupKind;
  nowMs: number;
  requests: GroupKinds[GroupKind]['request'][];
}

/** Why a group was not written; `failure` when it was refused with an expected outcome (OutcomeError). */
export interface GroupError {
  message: string;
  stack: string;
  failure?: Failure;
}

export type GroupReply =
  | { id: number; outcomes: GroupKinds[GroupKind]['outcome'][] }
  | {
      id: number;
      error: GroupError;
      /** The group committed, and only its answer was lost: it must not be written again. */
      committed?: boolean;
    };
