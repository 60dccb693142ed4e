/** The email sender the configuration asks for: SMTP when SMTP_URL is set, else the development sender. */
import { DevelopmentEmailSender } from './development.js';
import { SmtpEmailSender } from './smtp.js';
import type { EmailLog, EmailSender } from './types.js';

export type { EmailLog, EmailMessage, EmailSender } from './types.js';
export { DevelopmentEmailSender } from './development.js';
export { SmtpEmailSender } from './smtp.js';

/** `smtpUrl` null: the development sender, writing to `log`. */
export function emailSender(config: { smtpUrl: string | null; smtpFrom: string }, log: EmailLog): EmailSender {
  return config.smtpUrl !== null
    ? new SmtpEmailSender(config.smtpUrl, config.smtpFrom)
    : new DevelopmentEmailSender(log);
}
