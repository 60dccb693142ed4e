/**
 * Without SMTP_URL: nothing is sent; the message's recipient, subject and links are written to the
 * app log (at `warn`, so the default log level shows them), for a developer to follow. Only the links
 * leave the message: its body is never logged, and no message carries a password.
 */
import type { EmailLog, EmailMessage, EmailSender } from './types.js';

const LINK = /https?:\/\/[^\s<>"']+/g;

export class DevelopmentEmailSender implements EmailSender {
  constructor(private readonly log: EmailLog) {}

  async send(msg: EmailMessage): Promise<void> {
    const links = msg.text.match(LINK) ?? [];
    this.log({ email: { to: msg.to, subject: msg.subject, links } }, 'email not sent (no SMTP_URL); its links');
  }
}
