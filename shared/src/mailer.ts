// Plain-text e-mail for alerts and reminders. With SMTP_URL set, mail goes to that
// relay; without it (development, tests) it is logged and not sent (README, "Configuration").
import type { Transporter } from 'nodemailer';
import type { Logger } from './logger.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Rejects when the relay cannot be reached or refuses the mail: the caller retries. */
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}

export interface MailerOptions {
  /** `smtp://[user:pass@]host[:port]` (STARTTLS when offered) or `smtps://` (TLS from the start); unset: log only. */
  smtpUrl?: string;
  from: string;
  logger: Logger;
}

export function createMailer(opts: MailerOptions): Mailer {
  const { smtpUrl, from, logger } = opts;
  if (!smtpUrl) {
    return {
      async send(mail) {
        logger.info({ mail: { from, ...mail } }, 'mail not sent (SMTP_URL unset)');
      },
      async close() {},
    };
  }
  // Loaded at the first mail: nodemailer is about 7 MB of a process's idle memory otherwise.
  let transport: Promise<Transporter> | null = null;
  const open = () =>
    (transport ??= import('nodemailer').then(({ createTransport }) =>
      // nodemailer's defaults (2 min to connect, 10 min idle) would hold a failing caller far past its retry delay.
      createTransport(
        { url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 },
        { from },
      ),
    ));
  return {
    async send(mail) {
      try {
        const info = await (await open()).sendMail(mail);
        logger.info({ to: mail.to, subject: mail.subject, messageId: info.messageId }, 'mail sent');
      } catch (err) {
        throw new Error(`sending mail "${mail.subject}" to ${mail.to} failed`, { cause: err });
      }
    },
    async close() {
      (await transport)?.close();
    },
  };
}
