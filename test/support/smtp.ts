/** A real SMTP receiver on loopback (smtp-server): the messages the server sends, as text. */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Mail {
  to: string[];
  raw: string;
  /** The raw message with quoted-printable soft breaks and escapes undone (links read whole). */
  text: string;
}

export interface MailReceiver {
  url: string;
  mails: Mail[];
  /** Waits for a message to `to` whose text matches `pattern`; returns the match. */
  waitFor(to: string, pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  close(): Promise<void>;
}

const decodeQuotedPrintable = (s: string) =>
  s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));

export async function startMailReceiver(): Promise<MailReceiver> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw, text: decodeQuotedPrintable(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitFor(to, pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (const m of mails) {
          const found = m.to.includes(to) ? m.text.match(pattern) : null;
          if (found) return found;
        }
        if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${pattern} (${mails.length} received)`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
