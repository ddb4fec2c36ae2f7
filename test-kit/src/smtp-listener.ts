// A real SMTP server on 127.0.0.1 that keeps what it receives, for tests that send
// mail through createMailer. It offers neither STARTTLS nor AUTH, so nodemailer
// talks plain SMTP to it without the mailer itself being told to ignore TLS.
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { waitFor } from './wait.ts';

export interface ReceivedMail {
  /** Envelope sender and recipients (MAIL FROM / RCPT TO). */
  from: string;
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

export interface SmtpListener {
  /** smtp://127.0.0.1:PORT */
  url: string;
  messages: ReceivedMail[];
  /** Resolves with the messages once at least count have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

async function readMail(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<ReceivedMail> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const parsed = await simpleParser(raw);
  const { mailFrom, rcptTo } = session.envelope;
  return {
    from: mailFrom ? mailFrom.address : '',
    to: rcptTo.map((r) => r.address),
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    raw,
  };
}

export async function startSmtpListener(): Promise<SmtpListener> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      readMail(stream, session).then(
        (mail) => {
          messages.push(mail);
          callback();
        },
        (err: unknown) => callback(err as Error),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(count, timeoutMs = 5000) {
      await waitFor(`${count} mail(s)`, () => messages.length >= count, timeoutMs);
      return messages;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
