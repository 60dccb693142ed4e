/** What the server sends by email (verification and password-reset links), and the one way it sends it. */

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface EmailSender {
  /** Resolves once the message is handed over (to the SMTP server, or to the log); rejects when it was not. */
  send(msg: EmailMessage): Promise<void>;
}

/** Where the development sender writes: the app logger's `warn` (fields, then the message). */
export type EmailLog = (fields: Record<string, unknown>, message: string) => void;
