// The operator commands (README, "Operator CLI"): each returns the one JSON object its
// --json form prints, and the lines of its human-readable form.
import type { Accounts, ApiKey, Team, User } from '../domain/accounts.ts';
import { listDlq, replayDlq } from './dlq.ts';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type Options = Record<string, string | undefined>;

export interface Output {
  json: Record<string, unknown>;
  text: string[];
}

interface StoreCommand {
  usage: string;
  required: string[];
  optional: string[];
  uses?: 'store';
  /** `o` holds every required option; optional ones may be missing. */
  run(accounts: Accounts, o: Record<string, string>): Promise<Output>;
}

/** A command on RabbitMQ (AMQP_URL) rather than the store. */
interface BrokerCommand {
  usage: string;
  required: string[];
  optional: string[];
  uses: 'broker';
  run(amqpUrl: string, o: Record<string, string>): Promise<Output>;
}

export type Command = StoreCommand | BrokerCommand;

const teamShape = (t: Team) => ({ id: t.id, name: t.name, plan: t.plan, timezone: t.timezone });
const userShape = (u: User) => ({ id: u.id, name: u.name, email: u.email });
const keyLines = (apiKey: string, key: ApiKey) => [
  `api key:  ${apiKey}`,
  `key id:   ${key.id} (scopes: ${key.scopes.join(', ')})`,
  'The key is shown only now: store it safely.',
];

export const COMMANDS: Record<string, Command> = {
  'team create': {
    usage:
      'team create --name NAME --plan starter|professional|enterprise --owner-name NAME --owner-email EMAIL [--timezone TZ]',
    required: ['name', 'plan', 'owner-name', 'owner-email'],
    optional: ['timezone'],
    async run(accounts, o) {
      const r = await accounts.createTeam({
        name: o.name,
        plan: o.plan,
        timezone: o.timezone || undefined,
        ownerName: o['owner-name'],
        ownerEmail: o['owner-email'],
      });
      return {
        json: { team: teamShape(r.team), user: userShape(r.user), api_key: r.apiKey, key_id: r.key.id },
        text: [
          `team:     ${r.team.id} ${r.team.name} (plan ${r.team.plan}, time zone ${r.team.timezone})`,
          `owner:    ${r.user.id} ${r.user.name} <${r.user.email}>`,
          ...keyLines(r.apiKey, r.key),
        ],
      };
    },
  },
  'user create': {
    usage: 'user create --team TEAM_ID --name NAME --email EMAIL',
    required: ['team', 'name', 'email'],
    optional: [],
    async run(accounts, o) {
      const user = await accounts.createUser({ teamId: o.team, name: o.name, email: o.email });
      return {
        json: { user: userShape(user) },
        text: [`user:     ${user.id} ${user.name} <${user.email}> in ${user.team_id}`],
      };
    },
  },
  'key create': {
    usage: 'key create --team TEAM_ID --user USER_ID --scopes read[,write][,admin]',
    required: ['team', 'user', 'scopes'],
    optional: [],
    async run(accounts, o) {
      const r = await accounts.createKey({ teamId: o.team, userId: o.user, scopes: o.scopes.split(',') });
      return { json: { api_key: r.apiKey, key_id: r.key.id, scopes: r.key.scopes }, text: keyLines(r.apiKey, r.key) };
    },
  },
  'key revoke': {
    usage: 'key revoke --key KEY_ID',
    required: ['key'],
    optional: [],
    async run(accounts, o) {
      const key = await accounts.revokeKey(o.key);
      return {
        json: { key_id: key.id, revoked: true },
        text: [`key ${key.id} revoked at ${key.revoked_at?.toISOString()}`],
      };
    },
  },
  'team plan': {
    usage: 'team plan --team TEAM_ID --plan starter|professional|enterprise',
    required: ['team', 'plan'],
    optional: [],
    async run(accounts, o) {
      const team = await accounts.setPlan(o.team, o.plan);
      return {
        json: { team: teamShape(team) },
        text: [`team:     ${team.id} ${team.name} is now on plan ${team.plan}`],
      };
    },
  },
};

/** `dlq <verb> --queue QUEUE|QUEUE.dlq`: `act` on the queue's DLQ, its answer the JSON, `describe` the text. */
function dlqCommand<R extends Output['json']>(
  verb: string,
  act: (amqpUrl: string, queue: string) => Promise<R>,
  describe: (r: R) => string[],
): BrokerCommand {
  return {
    usage: `dlq ${verb} --queue QUEUE|QUEUE.dlq`,
    required: ['queue'],
    optional: [],
    uses: 'broker',
    async run(amqpUrl, o) {
      const r = await act(amqpUrl, o.queue);
      return { json: r, text: describe(r) };
    },
  };
}

export const DLQ_COMMANDS: Record<string, BrokerCommand> = {
  'dlq list': dlqCommand('list', listDlq, (r) => [
    `${r.dlq}: ${r.count} message(s)`,
    ...r.messages.map((m) => `  ${m.id ?? '-'} ${m.type ?? '-'} attempt ${m.attempt ?? '-'}: ${m.last_error ?? '-'}`),
  ]),
  'dlq replay': dlqCommand('replay', replayDlq, (r) => [
    `${r.replayed} message(s) moved from ${r.dlq} back into ${r.queue}`,
  ]),
};

Object.assign(COMMANDS, DLQ_COMMANDS);

export const ALL_OPTIONS = [...new Set(Object.values(COMMANDS).flatMap((c) => [...c.required, ...c.optional]))];

export const HELP = [
  'Usage: npm run -s admin -- <command> [options] [--json]',
  '',
  'Commands:',
  ...Object.values(COMMANDS).map((c) => `  ${c.usage}`),
  '',
  'Every command accepts --json: exactly one JSON object on stdout, nothing else.',
  'Errors go to stderr with a non-zero exit code (2: bad arguments or values, 1: the command could not be done).',
  'The store is MONGO_URL (database <MONGO_DB_PREFIX>gateway, prefix lpm_ by default);',
  'without MONGO_URL, the local store of `npm start`, started for the command if it is not running.',
  "The dlq commands use AMQP_URL (amqp://guest:guest@127.0.0.1:5672 by default); QUEUE is the consumer's",
  "full queue name (<AMQP_EXCHANGE>.<name>), its DLQ QUEUE.dlq; <AMQP_EXCHANGE>.unrouted is the exchange's",
  'parking queue (events published before a queue was bound for them), replayed to the exchange.',
].join('\n');

/** The command and its options, or a UsageError saying what is wrong. */
export function resolveCommand(positionals: string[], given: Options): { command: Command; options: Options } {
  const name = positionals.join(' ');
  const command = COMMANDS[name];
  if (!command) throw new UsageError(positionals.length ? `unknown command: ${name}` : 'no command given');
  for (const option of Object.keys(given)) {
    if (given[option] !== undefined && !command.required.includes(option) && !command.optional.includes(option)) {
      throw new UsageError(`--${option} does not apply to ${name}`);
    }
  }
  for (const option of command.required) {
    if (given[option] === undefined || given[option].trim() === '')
      throw new UsageError(`--${option} is required (${command.usage})`);
  }
  return { command, options: given };
}
