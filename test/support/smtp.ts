/**
 * A real SMTP server on loopback (smtp-server) that keeps every message it receives, parsed
 * (mailparser): the tests point SMTP_URL at it and follow the links the server emails.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  text: string;
}

export interface SmtpReceiver {
  url: string;
  messages: ReceivedMail[];
  /** The first message (in arrival order) to `to` not yet taken, waiting for it to arrive; it is taken. */
  next(to: string): Promise<ReceivedMail>;
  close(): Promise<void>;
}

const WAIT_MS = 10_000;

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const taken = new Set<ReceivedMail>();
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(', ') : (mail.to?.text ?? '');
          messages.push({ to, from: mail.from?.text ?? '', subject: mail.subject ?? '', text: mail.text ?? '' });
          for (const w of waiters.splice(0)) w();
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async next(to: string) {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const found = messages.find((m) => !taken.has(m) && m.to.includes(to));
        if (found) {
          taken.add(found);
          return found;
        }
        if (Date.now() > deadline) throw new Error(`no email to ${to} arrived`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The token of the emailed link to `path` (/verify-email, /reset-password). */
export function linkToken(mail: ReceivedMail, path: string): string {
  const m = new RegExp(`https?://[^\\s]+${path}\\?token=([A-Za-z0-9_-]+)`).exec(mail.text);
  if (!m) throw new Error(`no ${path} link in: ${mail.text}`);
  return m[1]!;
}
