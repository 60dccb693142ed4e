/**
 * SMTP delivery through nodemailer (SMTP_URL, SMTP_FROM): one transport per process, made on the
 * first message (a process that sends no email never loads nodemailer).
 */
import type { Transporter } from 'nodemailer';
import type { EmailMessage, EmailSender } from './types.js';

export class SmtpEmailSender implements EmailSender {
  #transport: Promise<Transporter> | undefined;

  /** `url`: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://host:465. */
  constructor(
    private readonly url: string,
    private readonly from: string,
  ) {}

  async send(msg: EmailMessage): Promise<void> {
    this.#transport ??= import('nodemailer').then((m) => m.createTransport(this.url));
    await (await this.#transport).sendMail({
      from: this.from,
      to: msg.to,
      subject: msg.subject,
      text: msg.text,
      ...(msg.html !== undefined ? { html: msg.html } : {}),
    });
  }
}
