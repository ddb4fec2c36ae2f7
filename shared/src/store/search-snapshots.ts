// A team's search entries kept in the store, so that a process that starts, or that
// dropped the team while it was idle, holds them again from a few documents instead
// of reading every record: FerretDB decodes a whole record to give a few fields,
// about 15 s for a team of 100,000. A snapshot is a head document per collection and
// team (the snapshot's id, how many parts, which write slots it has settled) and its
// parts, PART_ENTRIES entries each as one JSON string (a string is cheap for FerretDB
// to decode). A process that has read a team saves it, in the background; a process
// that loads one reads the write slots after it (search-index.ts), so a snapshot is
// used only while those slots are few enough to read.
import { randomUUID } from 'node:crypto';
import type { Db, Document } from 'mongodb';
import type { FieldKind } from './search-columns.ts';
import { SWEEP } from './time-budgets.ts';

export const SEARCH_SNAPSHOTS = 'search_snapshots';
/** Entries a part holds: about 2 MB of JSON, far under a document's 16 MB. */
const PART_ENTRIES = 5000;

interface Head {
  _id: string;
  kind: 'head';
  team_id: string;
  collection: string;
  snapshot: string;
  parts: number;
  entries: number;
  /** Every write slot before this one is in the entries. */
  settled_before: number;
  /** When the full read of the team that the entries descend from began (ms). */
  built_at: number;
}

interface Part {
  _id: string;
  kind: 'part';
  team_id: string;
  collection: string;
  snapshot: string;
  index: number;
  entries: string;
}

export interface Snapshot {
  rows: Document[];
  settledBefore: number;
  builtAt: number;
}

export class SearchSnapshots {
  private readonly db: Db;
  private readonly collection: string;
  /** The fields held as instants: JSON gives them back as strings. */
  private readonly times: string[];

  constructor(db: Db, collection: string, fields: Record<string, FieldKind>) {
    this.db = db;
    this.collection = collection;
    this.times = Object.entries(fields)
      .filter(([, kind]) => kind === 'time')
      .map(([f]) => f);
  }

  private indexed: Promise<unknown> | null = null;

  /**
   * Its indexes, made once: a part's filter is read from the index, not from every
   * part's 2 MB. One at a time: FerretDB closes the connection on a createIndexes of
   * several indexes that exist already (docs/ferretdb.md).
   */
  private ready(): Promise<unknown> {
    const col = this.db.collection(SEARCH_SNAPSHOTS);
    return (this.indexed ??= (async () => {
      await col.createIndex({ snapshot: 1 }, SWEEP);
      await col.createIndex({ team_id: 1 }, SWEEP);
    })().catch((e: unknown) => {
      this.indexed = null;
      throw e;
    }));
  }

  private get heads() {
    return this.db.collection<Head>(SEARCH_SNAPSHOTS);
  }

  private get parts() {
    return this.db.collection<Part>(SEARCH_SNAPSHOTS);
  }

  private headId(teamId: string): string {
    return `${this.collection}:${teamId}`;
  }

  /** Stores `rows` as the team's snapshot in place of the last one. */
  async save(teamId: string, rows: Iterable<Document>, settledBefore: number, builtAt: number): Promise<void> {
    await this.ready();
    const snapshot = randomUUID();
    const base = { team_id: teamId, collection: this.collection, snapshot };
    let index = 0;
    let entries = 0;
    let batch: Document[] = [];
    const flush = async () => {
      await this.parts.insertOne(
        { ...base, _id: `${snapshot}:${index}`, kind: 'part', index, entries: JSON.stringify(batch) },
        SWEEP,
      );
      entries += batch.length;
      index++;
      batch = [];
    };
    for (const row of rows) {
      batch.push(row);
      if (batch.length === PART_ENTRIES) await flush();
    }
    if (batch.length > 0 || index === 0) await flush();
    const head: Omit<Head, '_id'> = {
      ...base,
      kind: 'head',
      parts: index,
      entries,
      settled_before: settledBefore,
      built_at: builtAt,
    };
    await this.heads.updateOne({ _id: this.headId(teamId) }, { $set: head }, { upsert: true, ...SWEEP });
    // The parts of the snapshots this one replaces (a save that lost a race included).
    await this.parts.deleteMany(
      { team_id: teamId, collection: this.collection, kind: 'part', snapshot: { $ne: snapshot } },
      SWEEP,
    );
  }

  /** The teams whose snapshot of this collection has settled no slot from `slot` on. */
  async settledBefore(slot: number): Promise<string[]> {
    await this.ready();
    const heads = await this.heads
      .find({ kind: 'head', collection: this.collection }, { projection: { team_id: 1, settled_before: 1 }, ...SWEEP })
      .toArray();
    return heads.filter((h) => h.settled_before < slot).map((h) => h.team_id);
  }

  /** Whether the team has a snapshot that settled a slot from `oldestSlot` on (its parts not checked). */
  async usable(teamId: string, oldestSlot: number): Promise<boolean> {
    await this.ready();
    const head = await this.heads.findOne({ _id: this.headId(teamId), team_id: teamId }, SWEEP);
    return head !== null && head.settled_before >= oldestSlot;
  }

  /** The team's snapshot, unless it has settled no slot from `oldestSlot` on (then it is deleted), or its parts are not all there. */
  async load(teamId: string, oldestSlot: number): Promise<Snapshot | null> {
    await this.ready();
    const head = await this.heads.findOne({ _id: this.headId(teamId), team_id: teamId }, SWEEP);
    if (!head) return null;
    if (head.settled_before < oldestSlot) {
      await this.db.collection(SEARCH_SNAPSHOTS).deleteMany({ team_id: teamId, collection: this.collection }, SWEEP);
      return null;
    }
    const parts = await this.parts
      .find({ team_id: teamId, collection: this.collection, kind: 'part', snapshot: head.snapshot }, SWEEP)
      .toArray();
    if (parts.length !== head.parts) return null;
    parts.sort((a, b) => a.index - b.index);
    const rows: Document[] = [];
    for (const part of parts) {
      for (const row of JSON.parse(part.entries) as Document[]) {
        for (const f of this.times) if (typeof row[f] === 'string') row[f] = new Date(row[f]);
        rows.push(row);
      }
    }
    return rows.length === head.entries ? { rows, settledBefore: head.settled_before, builtAt: head.built_at } : null;
  }
}
