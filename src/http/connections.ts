/**
 * The HTTP server's connections: a cap (server.maxConnections) with the idle ones closed first as
 * the cap nears, and a graceful drain for shutdown (requests in flight are answered with
 * `Connection: close`, idle keep-alive connections are closed at once).
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** From this share of the cap on, each new connection closes the longest-idle ones. */
const NEAR_CAP = 0.9;

export class ConnectionGuard {
  /** Connections with no request in progress, longest idle first (a Set keeps insertion order). */
  readonly #idle = new Set<Socket>();
  /** Responses not yet finished. */
  readonly #inFlight = new Set<ServerResponse>();
  #open = 0;
  #draining = false;
  readonly #nearCap: number;

  constructor(server: HttpServer, maxConnections: number) {
    server.maxConnections = maxConnections;
    this.#nearCap = Math.max(1, Math.floor(maxConnections * NEAR_CAP));
    server.on('connection', (socket: Socket) => this.#onConnection(socket));
    // Before Fastify's own listener: a response started while draining must already say close.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.#onRequest(req, res));
  }

  /** Connections open now. */
  get open(): number {
    return this.#open;
  }

  #onConnection(socket: Socket): void {
    this.#open++;
    socket.once('close', () => {
      this.#open--;
      this.#idle.delete(socket);
    });
    if (this.#open >= this.#nearCap) {
      // Near the cap: make room by closing the connections idle longest (never the new one).
      for (const s of this.#idle) {
        if (this.#open - 1 < this.#nearCap) break;
        this.#idle.delete(s);
        s.destroy();
      }
    }
    this.#idle.add(socket);
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    this.#idle.delete(socket);
    if (this.#draining) res.setHeader('connection', 'close');
    this.#inFlight.add(res);
    res.once('close', () => {
      this.#inFlight.delete(res);
      if (!socket.destroyed) {
        if (this.#draining) socket.destroySoon();
        else this.#idle.add(socket);
      }
    });
  }

  /**
   * Shutdown: every response not yet sent closes its connection, and idle connections are
   * closed now (server.close() stops accepting; Node closes idle ones as it does).
   */
  drain(): void {
    this.#draining = true;
    for (const res of this.#inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    for (const s of this.#idle) s.destroy();
    this.#idle.clear();
  }
}
