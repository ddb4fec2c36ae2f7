// A team's users in the store; an e-mail is unique within its team (the index
// entities.ts declares), and a second one is the domain's duplicate-email error.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { duplicateEmail } from '../contract/account-errors.ts';
import type { UserRecord } from './entities.ts';

export class UsersRepository {
  private readonly users: Collection<UserRecord>;

  constructor(db: Db) {
    this.users = db.collection<UserRecord>('users');
  }

  async insert(user: UserRecord): Promise<void> {
    try {
      await this.users.insertOne(user);
    } catch (e) {
      if (isDuplicateKey(e)) throw duplicateEmail();
      throw e;
    }
  }

  get(teamId: string, id: string): Promise<UserRecord | null> {
    return this.users.findOne({ _id: id, team_id: teamId });
  }

  /** The users of the team among ids. */
  findMany(teamId: string, ids: readonly string[]): Promise<UserRecord[]> {
    return this.users.find({ team_id: teamId, _id: { $in: [...ids] } }).toArray();
  }
}
