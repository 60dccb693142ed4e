/**
 * The HTTP connection's edges, outside any route: framing errors that Node's parser raises before
 * Fastify sees a request (answered in our error body), the request id, and closing the connection
 * after an error answered before the request's body was read (so that a rejected 200 MB upload is
 * not read to its end).
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { errorBody, type ErrorCode } from './errors.js';

/** A client's `request-id` is kept when it is this sane; otherwise the server makes one. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:+/=@-]{1,128}$/;
export const REQUEST_ID_HEADER = 'request-id';

/** Fastify's genReqId: the client's `request-id` if sane, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * After an error answered while the request's body is still arriving, the connection is closed in
 * stages (RFC 9112 §9.6, nginx's lingering_close): the answer is sent and our side half-closed, the
 * client's further bytes are read and dropped for at most this long, then the socket is destroyed.
 * Closing at once would make the kernel reset the connection over the unread bytes, and the client,
 * still writing, could lose the answer.
 */
export const LINGER_MS = 2_000;

/**
 * Node ends a `Connection: close` response with socket.destroySoon() (end, then destroy once our
 * side is flushed); for this socket it becomes: end, keep reading (Node's parser drops the rest of
 * the body), destroy when the client closes its side or after LINGER_MS. A second call destroys.
 */
function lingerOnClose(socket: Socket): void {
  let lingering = false;
  socket.destroySoon = () => {
    if (lingering || !socket.writable) {
      socket.destroy();
      return;
    }
    lingering = true;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(timer));
    socket.end();
  };
}

/**
 * onSend: echoes the request id, and closes the connection after an error answered while the
 * request's body was still arriving (Node would otherwise read the rest of it to keep the
 * connection), with a lingering close so that the client receives the answer.
 */
export function onSendConnection(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: HookHandlerDoneFunction & ((err: Error | null, payload?: unknown) => void),
): void {
  reply.header(REQUEST_ID_HEADER, request.id);
  if (reply.statusCode >= 400 && !request.raw.complete) {
    reply.header('connection', 'close');
    lingerOnClose(request.raw.socket);
  }
  done(null, payload);
}

/** Node's clientError: a request the parser refused (or a client too slow), answered in our error body. */
export function clientErrorHandler(
  this: FastifyInstance,
  err: Error & { code?: string; reason?: string },
  socket: Socket,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let code: ErrorCode = 'malformed_request';
  let message = `malformed HTTP request: ${err.reason ?? err.message}`;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    code = 'headers_too_large';
    message = 'the request headers are larger than 16 KB';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    code = 'request_timeout';
    message = 'the request was not received in time';
  }
  this.log.debug({ err }, 'client error');
  const out = errorBody(code, message);
  const body = JSON.stringify(out.body);
  const inResponse = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && !inResponse) {
    socket.write(
      `HTTP/1.1 ${out.status} ${STATUS_CODES[out.status]}\r\nConnection: close\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroySoon();
}
