/** Messages between the main thread and the SQLite ingest writer thread. */
import type { IngestRequest } from '../domain/events.js';
import type { Outcome } from '../domain/outcome.js';
import type { IngestResult } from '../operations/events.js';

export interface WorkerInit {
  /** URL of thread.ts or thread.js (read by boot-tsx.mjs). */
  entry: string;
  filename: string;
}

export interface GroupRequest {
  id: number;
  nowMs: number;
  requests: IngestRequest[];
}

export type GroupReply =
  | { id: number; outcomes: Outcome<IngestResult>[] }
  | { id: number; error: { message: string; stack: string } };
