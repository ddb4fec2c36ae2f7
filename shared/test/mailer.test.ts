import { ConfigError, mailSettings, readConfig } from '../src/config.ts';
import { freePort } from '../../scripts/local-store.ts';
import { createMailer } from '../src/mailer.ts';
import { startSmtpListener, type SmtpListener } from '@lpm/test-kit/smtp-listener';
import { captureLogger, quietLogger } from '@lpm/test-kit/wait';

let smtp: SmtpListener;

beforeAll(async () => {
  smtp = await startSmtpListener();
});

afterAll(async () => {
  await smtp.close();
});

beforeEach(() => {
  smtp.messages.length = 0;
});

const mail = {
  to: 'owner@example.com',
  subject: 'Webhook deactivated',
  text: 'Olá,\nthe webhook https://example.com/hook was deactivated.',
};

it('when SMTP_URL is set, then the mail reaches the relay with its sender, recipient, subject and text', async () => {
  const log = captureLogger();
  const mailer = createMailer({ smtpUrl: smtp.url, from: 'alerts@lpm.test', logger: log });
  try {
    await mailer.send(mail);
    const [got] = await smtp.waitFor(1);
    expect(got).toMatchObject({ from: 'alerts@lpm.test', to: ['owner@example.com'], subject: mail.subject });
    expect(got.text.trim()).toBe(mail.text);
    expect(got.raw).toMatch(/^From: alerts@lpm\.test\r?$/m);
    expect(log.lines).toMatchObject([{ level: 'info', msg: 'mail sent', obj: { to: mail.to, subject: mail.subject } }]);
  } finally {
    await mailer.close();
  }
});

it('when SMTP_URL is unset, then the mail is logged at info and nothing is sent', async () => {
  const log = captureLogger();
  const mailer = createMailer({ from: 'no-reply@localhost', logger: log });
  await mailer.send(mail);
  await mailer.close();
  expect(log.lines).toEqual([
    { level: 'info', msg: 'mail not sent (SMTP_URL unset)', obj: { mail: { from: 'no-reply@localhost', ...mail } } },
  ]);
  expect(smtp.messages).toEqual([]);
});

it('when the relay cannot be reached, then send rejects with the cause, so the caller can retry', async () => {
  const mailer = createMailer({
    smtpUrl: `smtp://127.0.0.1:${await freePort()}`,
    from: 'alerts@lpm.test',
    logger: quietLogger,
  });
  try {
    const err = (await mailer.send(mail).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toBe('sending mail "Webhook deactivated" to owner@example.com failed');
    expect((err.cause as Error).message).toMatch(/ECONNREFUSED/);
  } finally {
    await mailer.close();
  }
});

it('when the mail settings are read, then SMTP_URL is optional but must be smtp(s), and MAIL_FROM defaults to no-reply@localhost', () => {
  expect(readConfig(mailSettings, {})).toEqual({ smtpUrl: undefined, mailFrom: 'no-reply@localhost' });
  expect(
    readConfig(mailSettings, { SMTP_URL: 'smtps://u:p@mail.example.com:465', MAIL_FROM: 'lpm@example.com' }),
  ).toEqual({
    smtpUrl: 'smtps://u:p@mail.example.com:465',
    mailFrom: 'lpm@example.com',
  });
  expect(() => readConfig(mailSettings, { SMTP_URL: 'http://mail.example.com' })).toThrow(ConfigError);
  expect(() => readConfig(mailSettings, { SMTP_URL: 'http://mail.example.com' })).toThrow(
    /SMTP_URL: must use smtp: or smtps:/,
  );
});
