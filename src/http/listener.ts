/**
 * The one HTTP server of a process: it listens before the database is reached and migrated, answers
 * as a placeholder meanwhile (`/healthz` 200, `/readyz` and everything else 503 `not_ready`), then
 * hands every request to the Fastify app once it is ready, on the same socket: no window in which
 * connections are refused. Fastify's own `app.server` never listens; its request handler
 * (`app.routing`) is called from here, and its timeouts are copied onto this server.
 */
import { type IncomingMessage, type Server as HttpServer, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { App } from './app.js';
import { REQUEST_ID_HEADER, requestIdOf } from './connection.js';
import { ConnectionGuard } from './connections.js';
import { errorBody } from './errors.js';

/** What a starting server is doing, said in its 503 answers. */
export type StartPhase = 'waiting for the database' | 'running migrations';

/** Seconds a client is told to wait (Retry-After) before it asks a starting server again. */
export const STARTING_RETRY_AFTER_S = 1;

/**
 * Connections the kernel completes before the server accepts them (the kernel caps it at
 * net.core.somaxconn). Node's default, 511, overflows when thousands connect at once: Linux then
 * drops the handshake's last ACK, and a client can believe it is connected to a server that never
 * accepted it, and so can never answer or close it.
 */
const LISTEN_BACKLOG = 4_096;

const HEALTH = /^\/healthz\/?(\?|$)/;
const READY = /^\/readyz\/?(\?|$)/;

/** The server's timeouts and connection cap (config.ts: BILLING_HTTP_*), until the app's own apply. */
export interface ListenerOptions {
  connectionMs: number;
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  maxConnections: number;
}

export class Listener {
  readonly server: HttpServer;
  readonly connections: ConnectionGuard;
  phase: StartPhase = 'waiting for the database';
  #app: App | undefined;
  #clientError: ((err: Error, socket: Socket) => void) | undefined;

  constructor(opts: ListenerOptions) {
    this.server = createServer({
      headersTimeout: opts.headersMs,
      requestTimeout: opts.requestMs,
      keepAliveTimeout: opts.keepAliveMs,
      // How often Node looks for connections past their headers/request timeout (its default: 30 s).
      connectionsCheckingInterval: Math.min(1_000, opts.headersMs),
    });
    this.server.setTimeout(opts.connectionMs);
    this.connections = new ConnectionGuard(this.server, opts.maxConnections);
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.#app) this.#app.routing(req, res);
      else this.#starting(req, res);
    });
    this.server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
      if (this.#clientError) this.#clientError(err, socket);
      else socket.destroy();
    });
  }

  /** Opens the port; rejects with the listen error (EADDRINUSE, EACCES…). */
  async listen(host: string, port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host, port, backlog: LISTEN_BACKLOG }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  get listening(): boolean {
    return this.server.listening;
  }

  get url(): string {
    const address = this.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** From now on every request goes to `app` (ready: its routes and plugins are loaded). */
  serve(app: App): void {
    // Fastify configured its own (never listening) server from its options: the same timeouts here.
    this.server.headersTimeout = app.server.headersTimeout;
    this.server.requestTimeout = app.server.requestTimeout;
    this.server.keepAliveTimeout = app.server.keepAliveTimeout;
    this.server.maxRequestsPerSocket = app.server.maxRequestsPerSocket;
    this.server.setTimeout(app.server.timeout);
    // And the parser errors answered as Fastify's server answers them (its clientErrorHandler option).
    const [clientError] = app.server.listeners('clientError') as ((err: Error, socket: Socket) => void)[];
    this.#clientError = clientError;
    this.#app = app;
  }

  /**
   * Stops accepting and resolves once every connection has ended: responses not yet sent close
   * their connection, idle ones are closed now.
   */
  close(): Promise<void> {
    this.connections.drain();
    return new Promise((resolve) => {
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
    });
  }

  /** The placeholder's answers while the database is reached and migrated. */
  #starting(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const read = req.method === 'GET' || req.method === 'HEAD';
    let status = 503;
    let body: unknown;
    if (read && HEALTH.test(url)) {
      status = 200;
      body = { status: 'ok' };
    } else if (read && READY.test(url)) {
      body = errorBody('not_ready', `starting: ${this.phase}`).body;
    } else {
      res.setHeader('retry-after', String(STARTING_RETRY_AFTER_S));
      body = errorBody('not_ready', `the server is starting (${this.phase}); retry later`).body;
    }
    const text = JSON.stringify(body);
    res.statusCode = status;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('content-length', Buffer.byteLength(text));
    res.setHeader(REQUEST_ID_HEADER, requestIdOf(req));
    // A request body not read is not read to its end either.
    if (!req.complete) res.setHeader('connection', 'close');
    res.end(text);
  }
}
