// ViewsRepository.record against the local store: newer facts win whatever the
// order they arrive in, another team's view is never touched, the facts it stored
// last are not written again, and no lock is taken.
import { MongoClient, type CommandStartedEvent, type Db } from 'mongodb';
import { LOCKS_COLLECTION } from '../src/store/lock.ts';
import { ViewsRepository, type View } from '../src/views/views-repository.ts';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

interface NamedView extends View {
  name: string;
}

let db: Db;
let views: ViewsRepository<NamedView>;

const at = (n: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, n));
const view = (id: string, n: number, team = 'team_a'): NamedView => ({
  _id: id,
  team_id: team,
  as_of: at(n),
  name: `name ${n}`,
});
const stored = (id: string) => db.collection<NamedView>('views').findOne({ _id: id });

scratchDatabase('views', (opened) => {
  db = opened;
  views = new ViewsRepository<NamedView>(db, 'views');
});

describe('ViewsRepository.record', () => {
  it('when no view exists, then the facts are stored as the view', async () => {
    await views.record(view('cli_new', 1));
    expect(await stored('cli_new')).toEqual(view('cli_new', 1));
  });

  it('when newer facts arrive, then they replace the view; when older facts arrive after them, then the view keeps the newer', async () => {
    await views.record(view('cli_order', 1));
    await views.record(view('cli_order', 3));
    await views.record(view('cli_order', 2));
    expect(await stored('cli_order')).toEqual(view('cli_order', 3));
  });

  it('when facts as of the same instant arrive again, then the last ones are kept', async () => {
    await views.record(view('cli_same', 5));
    await views.record({ ...view('cli_same', 5), name: 'corrected' });
    expect((await stored('cli_same'))?.name).toBe('corrected');
  });

  it("when another team's facts arrive for an id this team's view holds, then the view is left as it was", async () => {
    await views.record(view('cli_team', 1, 'team_a'));
    await views.record(view('cli_team', 9, 'team_b'));
    expect(await stored('cli_team')).toEqual(view('cli_team', 1, 'team_a'));
    expect((await views.find('team_b', ['cli_team'])).size).toBe(0);
  });

  it('when twenty versions of one view are recorded at once in a shuffled order, then the newest is the view', async () => {
    const versions = Array.from({ length: 20 }, (_, n) => view('cli_race', n + 1));
    const shuffled = [13, 2, 20, 7, 1, 18, 5, 11, 3, 16, 9, 14, 4, 19, 8, 12, 6, 17, 10, 15].map(
      (n) => versions[n - 1],
    );
    await Promise.all(shuffled.map((v) => views.record(v)));
    expect(await stored('cli_race')).toEqual(view('cli_race', 20));
  });

  it('when the facts this process stored are recorded again, then nothing is sent to the store; when they change, then they are written', async () => {
    const commands: string[] = [];
    const count = (e: CommandStartedEvent) => commands.push(e.commandName);
    const monitored = await MongoClient.connect(process.env.MONGO_URL!, { monitorCommands: true });
    try {
      const own = new ViewsRepository<NamedView>(monitored.db(db.databaseName), 'views');
      await own.record(view('cli_again', 4));
      monitored.on('commandStarted', count);
      await own.record(view('cli_again', 4));
      expect(commands).toEqual([]);
      await own.record({ ...view('cli_again', 4), name: 'renamed' });
      expect(commands).toEqual(['update']);
      expect((await stored('cli_again'))?.name).toBe('renamed');
    } finally {
      await monitored.close();
    }
  });

  it('when a view is recorded, then no document lock is taken', async () => {
    await views.record(view('cli_nolock', 1));
    await views.record(view('cli_nolock', 2));
    expect(await db.collection(LOCKS_COLLECTION).countDocuments({})).toBe(0);
    expect(await db.listCollections({ name: LOCKS_COLLECTION }).toArray()).toEqual([]);
  });
});
