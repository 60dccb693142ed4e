/** SMTP delivery through nodemailer (SMTP_URL, SMTP_FROM): one pooled transport per process. */
import { createTransport, type Transporter } from 'nodemailer';
import type { EmailMessage, EmailSender } from './types.js';

export class SmtpEmailSender implements EmailSender {
  readonly #transport: Transporter;
  readonly #from: string;

  /** `url`: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://host:465. */
  constructor(url: string, from: string) {
    this.#transport = createTransport(url);
    this.#from = from;
  }

  async send(msg: EmailMessage): Promise<void> {
    await this.#transport.sendMail({
      from: this.#from,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      ...(msg.html !== undefined ? { html: msg.html } : {}),
    });
  }

  close(): void {
    this.#transport.close();
  }
}
