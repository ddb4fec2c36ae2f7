// Search of a big team's records, answered in process. FerretDB 1.24 runs a regular
// expression in Go over every record of the team (about 90 µs a row decoded), so a
// search of a team of 100,000 outlived the store's 5 s budget; an n-gram array is
// pushed down (docs/ferretdb.md), but a term that matches 30% still decodes 30,000
// rows. So each process holds, per team it is asked to search, the records' search
// entries (search-table.ts), read once, and answers a page from memory, reading the
// page's records by `_id`.
//
// Kept fresh across replicas by a marker every write stores with the record (no store
// command of its own): `written_slot`, `<team>:<10 s slot of the write>`, indexed.
// Before it answers, a search reads again, by equality on the marker, every slot a
// write it has not seen may be in: from the first slot not yet settled to the slot of
// now plus the clocks' difference. A slot is settled once read LATE_WRITE_MS after its
// end: a write that answers has reached the store by then. So a record is found as
// soon as its write has answered, on any replica, and as it is now once changed;
// records are never deleted by the services (cases are archived, clients deactivated),
// and one gone when its page is read is dropped then. Concurrent searches of a team
// share one read of the slots that began after each of them.
//
// A team not held (a process that started, a team dropped while idle) is loaded from
// its snapshot in the store (search-snapshots.ts) when that has settled the slots of
// the last hour; else it is read whole, and saved. A team a process saw written often
// is read and saved in the background before its first search (search-ahead.ts). One
// replica brings forward, every REFRESH_EVERY_MS, the snapshots nobody keeps fresh.
//
// Memory: entries are held only for teams searched in the last IDLE_MS, at most
// `maxRecords` in all (the least recently searched team dropped first); a bigger team
// is searched by the plain query. A team's entries are read again in the background
// once REBUILD_MS old, so a write the markers missed (a direct driver write) is found.
import type { Collection, Db, Document } from 'mongodb';
import type { Logger } from '../logger.ts';
import type { RecordPage } from '../http/pagination.ts';
import { ownedBy } from './markers.ts';
import { everyUnderLease } from './leased-interval.ts';
import { WrittenTeams } from './search-ahead.ts';
import { SearchSnapshots } from './search-snapshots.ts';
import { firstUnsettled, inTurns, slotMarker, WRITTEN_SLOT_FIELD, writeSlotOf } from './search-slots.ts';
import { entriesOf, type TeamEntries } from './search-team.ts';
import { SearchTable, type FieldKind, type TableQuery } from './search-table.ts';
import { SWEEP, SWEEP_CURSOR } from './time-budgets.ts';

/** How far ahead of this process's clock another replica's may be (lock.ts): its slots are read too. */
const CLOCKS_APART_MS = 5_000;
/** A team not searched for this long is dropped. */
export const IDLE_MS = 5 * 60_000;
/** A team's entries this old are read again from the store, in the background. */
export const REBUILD_MS = 30 * 60_000;
/** A team whose slots are this many behind (a clock that jumped) is read again instead. */
const MAX_SLOTS_BEHIND = 120;
/** A team's stored snapshot is used while it has settled the slots of the last hour: the slots after it are read instead of the team. */
const SNAPSHOT_SLOTS = 360;
/** A held team is saved again this often, when searched. */
const SNAPSHOT_EVERY_MS = 5 * 60_000;
export const SNAPSHOT_MIN_RECORDS = 5000;
/** How often a writing or searching process brings forward the snapshots nobody keeps fresh, and how near to too old they get first (a stale one costs the next search a read of the team). */
const REFRESH_EVERY_MS = 10 * 60_000;
const REFRESH_AHEAD_SLOTS = SNAPSHOT_SLOTS / 3;
/** A team too big to hold is searched by the plain query, and not read again for this long. */
const TOO_BIG_MS = 10 * 60_000;
/** Records held in all, by default: 400-450 bytes each (a case, a client), so at most about 90 MB (docs/limits.md). */
export const DEFAULT_MAX_RECORDS = 200_000;
/** Store reads at once per search (slots, the page's records): a service has few store connections. */
const READERS = 4;
/** Rounds of a page whose records changed since they were held. */
const PAGE_ROUNDS = 3;

export interface SearchIndexOptions {
  db: Db;
  collection: string;
  /** Stored folded texts a search looks into. */
  texts: readonly string[];
  /** Stored fields a search filters and sorts on, and how each is held. */
  fields: Record<string, FieldKind>;
  /** Records held for all teams at most. */
  maxRecords?: number;
  /** A team read whole is saved as a snapshot from this many records (default SNAPSHOT_MIN_RECORDS): a smaller one is read whole in well under a second. */
  snapshotMinRecords?: number;
  /** A team this process saw written this many times is read and saved before its first search (default twice SNAPSHOT_MIN_RECORDS). */
  snapshotAheadWrites?: number;
  logger?: Logger;
  /** ms since the epoch; tests move it. */
  clock?: () => number;
}

export type SearchQuery = TableQuery;

export class SearchIndex {
  private readonly opts: SearchIndexOptions;
  private readonly clock: () => number;
  private readonly maxRecords: number;
  private readonly teams = new Map<string, TeamEntries>();
  private readonly building = new Map<string, Promise<TeamEntries | null>>();
  private readonly snapshots: SearchSnapshots;
  private readonly written: WrittenTeams;
  /** Teams too big to hold, until when. */
  private readonly tooBig = new Map<string, number>();
  private indexed: Promise<unknown> | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private refresher: NodeJS.Timeout | null = null;

  constructor(opts: SearchIndexOptions) {
    this.opts = opts;
    this.clock = opts.clock ?? Date.now;
    this.maxRecords = opts.maxRecords ?? DEFAULT_MAX_RECORDS;
    this.snapshots = new SearchSnapshots(opts.db, opts.collection, opts.fields);
    this.written = new WrittenTeams(opts.snapshotAheadWrites ?? 2 * SNAPSHOT_MIN_RECORDS, (t) => this.snapshotAhead(t));
  }

  private warn(message: string, fields: Record<string, unknown>): void {
    this.opts.logger?.warn({ collection: this.opts.collection, ...fields }, message);
  }

  private get col(): Collection<{ _id: string; version?: number }> {
    return this.opts.db.collection<{ _id: string; version?: number }>(this.opts.collection);
  }

  /** The marker to store with every write of `record` (insert or update). */
  markerOf(record: { team_id: string }): Record<string, string> {
    this.refreshLater();
    this.written.written(record.team_id);
    return { [WRITTEN_SLOT_FIELD]: slotMarker(record.team_id, writeSlotOf(this.clock())) };
  }

  /** Records held now, all teams together. */
  get held(): number {
    let n = 0;
    for (const t of this.teams.values()) n += t.table.size;
    return n;
  }

  /**
   * The page of the team's records that match `q`, and how many match, as the plain
   * query would give them at this instant (`projection`: of the records read); null
   * when the team is too big to hold (take the plain query).
   */
  async page<R>(teamId: string, q: SearchQuery, projection: Document): Promise<RecordPage<R> | null> {
    this.refreshLater();
    const asked = this.clock();
    const team = await this.fresh(teamId, asked);
    if (!team) return null;
    for (let round = 1; ; round++) {
      const { ids, total } = team.table.query(q);
      const records = await inTurns(ids, READERS, (id) =>
        this.col.findOne({ _id: id, ...ownedBy('team_id', teamId) }, { projection }),
      );
      // A record written since its entry was read (a write racing this search), or gone.
      let changed = false;
      records.forEach((r, i) => {
        if (!r) {
          team.table.remove(ids[i]);
          changed = true;
        } else if (team.table.versionOf(ids[i]) !== r.version) changed = team.table.apply(r) || changed;
      });
      if (!changed || round === PAGE_ROUNDS) return { records: records.filter((r) => r !== null) as R[], total };
    }
  }

  /** The team's entries with every write that answered before `asked` applied; null when too big to hold. */
  private async fresh(teamId: string, asked: number): Promise<TeamEntries | null> {
    const until = this.tooBig.get(teamId);
    if (until !== undefined) {
      if (until > asked) return null;
      this.tooBig.delete(teamId);
    }
    let team = this.teams.get(teamId);
    // Slots far behind (a clock that jumped): the team is read again instead.
    if (team && writeSlotOf(asked + CLOCKS_APART_MS) - team.settledBefore > MAX_SLOTS_BEHIND) this.teams.delete(teamId);
    team = this.teams.get(teamId) ?? (await this.built(teamId)) ?? undefined;
    if (!team) return null;
    team.lastUsed = asked;
    // The most recently used last: the map's order is the order of eviction.
    if (this.teams.get(teamId) === team) {
      this.teams.delete(teamId);
      this.teams.set(teamId, team);
    }
    if (asked - team.builtAt > REBUILD_MS && !team.rebuilding) this.rebuildLater(teamId, team);
    await this.syncedAfter(teamId, team, asked);
    return team;
  }

  /** The team's entries read from the store and held, once for callers that ask at once. */
  private built(teamId: string): Promise<TeamEntries | null> {
    let building = this.building.get(teamId);
    if (!building) {
      building = this.readFirst(teamId)
        .then((team) => team && this.hold(teamId, team))
        .finally(() => this.building.delete(teamId));
      this.building.set(teamId, building);
    }
    return building;
  }

  /** The oldest slot a usable snapshot has settled: SNAPSHOT_SLOTS before another replica's now. */
  private oldestUsableSlot(): number {
    return writeSlotOf(this.clock() + CLOCKS_APART_MS) - SNAPSHOT_SLOTS;
  }

  /** The team's stored snapshot when it is recent enough, else every record of the team (read). */
  private async readFirst(teamId: string): Promise<TeamEntries | null> {
    const snapshot = await this.snapshots.load(teamId, this.oldestUsableSlot()).catch((err: unknown) => {
      this.warn('search snapshot not read; the team is read instead', { err, team_id: teamId });
      return null;
    });
    if (!snapshot) return this.read(teamId);
    if (snapshot.rows.length > this.maxRecords) return this.tooBigNow(teamId);
    const table = new SearchTable(this.opts.texts, this.opts.fields);
    for (const row of snapshot.rows) table.apply(row);
    return entriesOf(table, snapshot.settledBefore, snapshot.builtAt, this.clock());
  }

  /** Reads every record of the team and saves them as its snapshot; null when they are more than can be held (remembered a while). */
  private async read(teamId: string): Promise<TeamEntries | null> {
    this.indexed ??= this.col.createIndex({ [WRITTEN_SLOT_FIELD]: 1 }, SWEEP).catch((e: unknown) => {
      this.indexed = null;
      throw e;
    });
    await this.indexed;
    const startedAt = this.clock();
    const table = new SearchTable(this.opts.texts, this.opts.fields);
    const cursor = this.col.find(
      { team_id: teamId },
      { projection: this.entryProjection(), batchSize: 1000, ...SWEEP_CURSOR },
    );
    try {
      for await (const r of cursor) {
        table.apply(r);
        if (table.size > this.maxRecords) return this.tooBigNow(teamId);
      }
    } finally {
      await cursor.close();
    }
    // Writes that answered after the read began may be missing from it.
    const team = entriesOf(table, firstUnsettled(startedAt), startedAt, startedAt);
    this.saveLater(teamId, team);
    return team;
  }

  /** Reads the team whole and saves it, not held, unless it is held, being read or has a usable snapshot; rejects when that failed. */
  private async snapshotAhead(teamId: string): Promise<void> {
    if (this.teams.has(teamId) || this.building.has(teamId)) return;
    try {
      if (!(await this.snapshots.usable(teamId, this.oldestUsableSlot()))) await this.read(teamId);
    } catch (err) {
      this.warn('search snapshot not made ahead; its writes are counted anew', { err, team_id: teamId });
      throw err;
    }
  }

  /** Saves the team's entries as its snapshot, in the background, one save at a time. */
  private saveLater(teamId: string, team: TeamEntries): void {
    if (team.saving || team.table.size < (this.opts.snapshotMinRecords ?? SNAPSHOT_MIN_RECORDS)) return;
    team.saving = true;
    team.savedAt = this.clock();
    this.snapshots
      .save(teamId, team.table.rows(), team.settledBefore, team.builtAt)
      .catch((err: unknown) => this.warn('search snapshot not saved; tried again later', { err, team_id: teamId }))
      .finally(() => (team.saving = false));
  }

  private tooBigNow(teamId: string): null {
    this.teams.delete(teamId);
    this.tooBig.set(teamId, this.clock() + TOO_BIG_MS);
    this.warn('team too big to search in process; searched by the plain query', {
      team_id: teamId,
      max_records: this.maxRecords,
    });
    return null;
  }

  private hold(teamId: string, team: TeamEntries): TeamEntries {
    this.teams.set(teamId, team);
    // The least recently searched teams go first (never this one) while more records than allowed are held.
    for (const [other] of this.teams) {
      if (this.held <= this.maxRecords) break;
      if (other !== teamId) this.teams.delete(other);
    }
    this.sweepIdle();
    return team;
  }

  private entryProjection(): Document {
    return Object.fromEntries(
      ['_id', 'version', ...this.opts.texts, ...Object.keys(this.opts.fields)].map((f) => [f, 1]),
    );
  }

  /** Reads the team again in the background and holds the new entries in place of `old`, unless it was dropped meanwhile; searches use `old` until then. */
  private rebuildLater(teamId: string, old: TeamEntries): void {
    old.rebuilding = true;
    this.read(teamId)
      .then((team) => {
        if (team && this.teams.get(teamId) === old) this.hold(teamId, team);
      })
      .catch((err: unknown) => {
        old.rebuilding = false;
        this.warn('search entries not read again; tried at the next search', { err, team_id: teamId });
      });
  }

  /** Resolves once a read of the team's slots that began at or after `asked` is done. */
  private syncedAfter(teamId: string, team: TeamEntries, asked: number): Promise<void> {
    if (team.syncedAt >= asked) return Promise.resolve();
    if (team.running && team.running.startedAt >= asked) return team.running.done;
    if (team.queued) return team.queued;
    if (!team.running) return this.sync(teamId, team);
    const queued = team.running.done
      .catch(() => {})
      .then(() => {
        team.queued = null;
        return this.sync(teamId, team);
      });
    team.queued = queued;
    return queued;
  }

  /** Reads every slot not settled yet, up to the slot of another replica's now, and applies what they hold. */
  private sync(teamId: string, team: TeamEntries): Promise<void> {
    const startedAt = this.clock();
    const done = (async () => {
      const last = writeSlotOf(startedAt + CLOCKS_APART_MS);
      const slots = Array.from({ length: last - team.settledBefore + 1 }, (_, i) => team.settledBefore + i);
      const projection = this.entryProjection();
      const read = await inTurns(slots, READERS, (slot) =>
        this.col
          .find({ [WRITTEN_SLOT_FIELD]: slotMarker(teamId, slot), ...ownedBy('team_id', teamId) }, { projection })
          .toArray(),
      );
      for (const records of read) for (const r of records) team.table.apply(r);
      team.settledBefore = Math.max(team.settledBefore, firstUnsettled(startedAt));
      team.syncedAt = Math.max(team.syncedAt, startedAt);
      if (team.table.size > this.maxRecords) this.tooBigNow(teamId);
      else if (this.teams.get(teamId) === team) {
        this.hold(teamId, team);
        if (this.clock() - team.savedAt >= SNAPSHOT_EVERY_MS) this.saveLater(teamId, team);
      }
    })().finally(() => {
      if (team.running?.done === done) team.running = null;
    });
    team.running = { startedAt, done };
    return done;
  }

  /** Looks for snapshots to bring forward every REFRESH_EVERY_MS, one replica at a time, from the first write or search on. */
  private refreshLater(): void {
    const key = `search-snapshots:${this.opts.collection}`;
    const failed = (err: unknown) => this.warn('search snapshots not brought forward; tried again later', { err });
    this.refresher ??= everyUnderLease(this.opts.db, key, REFRESH_EVERY_MS, () => this.refreshSnapshots(), failed);
  }

  /**
   * Brings forward each stored snapshot within REFRESH_AHEAD_SLOTS of being too old to
   * use: from itself and the slots written since (a team this process holds, from what
   * it holds), saved again, so a team searched once is not read whole again. The
   * teams it brings forward are not held. Resolves with those teams.
   */
  async refreshSnapshots(): Promise<string[]> {
    const usable = this.oldestUsableSlot();
    const refreshed: string[] = [];
    for (const teamId of await this.snapshots.settledBefore(usable + REFRESH_AHEAD_SLOTS)) {
      if (this.building.has(teamId)) continue;
      const held = this.teams.get(teamId);
      const team = held ?? (await this.readFirst(teamId));
      if (!team) continue;
      await this.syncedAfter(teamId, team, this.clock());
      // A team read whole just now is being saved already.
      if (team.saving) continue;
      await this.snapshots.save(teamId, team.table.rows(), team.settledBefore, team.builtAt);
      team.savedAt = this.clock();
      refreshed.push(teamId);
    }
    return refreshed;
  }

  /** Checks every minute, while any team is held, for teams to drop. */
  private sweepIdle(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.dropIdle(), 60_000);
    this.sweeper.unref();
  }

  /** Drops the teams not searched for IDLE_MS. */
  dropIdle(): void {
    const before = this.clock() - IDLE_MS;
    for (const [teamId, team] of this.teams) if (team.lastUsed < before) this.teams.delete(teamId);
    if (this.teams.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  /** Drops every team's entries (a process that stops). */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.refresher) clearInterval(this.refresher);
    this.sweeper = null;
    this.refresher = null;
    this.teams.clear();
  }
}
