// The version of each team's webhooks, in Redis: a write of a webhook sets a new one
// after it is stored, and each replica's copy of a team's subscribed webhooks
// (webhooks-repository.ts) is good while the version it was read under is current.
// A version is a random token, not a counter: this Redis may keep nothing on disk,
// and a counter started again from zero could come back to a value a copy holds.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '@lpm/shared/logger';

export class TeamVersions {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly log: Logger;

  private away = false;

  constructor(redis: Redis, keyPrefix: string, log: Logger) {
    this.redis = redis;
    this.prefix = `${keyPrefix}webhooks:version:`;
    this.log = log;
    // Also keeps ioredis from printing each failed reconnection.
    redis.on('error', (err: Error) => {
      if (!this.away)
        this.log.warn(
          { err },
          'Redis unreachable: subscribed webhooks are read from the store at every event until it is back',
        );
      this.away = true;
    });
    redis.on('ready', () => {
      if (this.away) this.log.info({}, 'Redis reachable again: subscribed webhooks are kept per team again');
      this.away = false;
    });
  }

  /** The team's version ('' before its first change), or null when Redis cannot tell now. */
  async current(teamId: string): Promise<string | null> {
    try {
      return (await this.redis.get(this.prefix + teamId)) ?? '';
    } catch {
      return null;
    }
  }

  /** A new version, once a change of the team's webhooks is stored; a failure is logged (the copies' age limit bounds it). */
  async changed(teamId: string): Promise<void> {
    try {
      await this.redis.set(this.prefix + teamId, randomUUID());
    } catch (err) {
      this.log.warn(
        { err, team_id: teamId },
        "webhook change not announced in Redis: other replicas read the team's webhooks anew within the copy's age limit",
      );
    }
  }
}
