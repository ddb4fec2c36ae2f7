// Makes FerretDB 1.24's own indexes usable on PostgreSQL (the local store only;
// production runs MongoDB and never sees this).
//
// FerretDB stores a collection as a table `<collection>_<hash>` with one jsonb
// column `_jsonb`, and turns an index the code declares into a btree on
// `((_jsonb->'field'))`. Its filters are `_jsonb->$1 @> $2` with the key as a bind
// parameter: a btree cannot serve `@>`, so every `{_id: X}` is a sequential scan
// (FerretDB issues #4646 and #4209). A GIN index on the same expression can serve
// it once the key is a constant in the plan, which `plan_cache_mode=
// force_custom_plan` (set on FerretDB's connection URL) makes sure of.
//
// An event trigger in FerretDB's database adds, whenever FerretDB creates a btree
// whose first key is a top-level field (the `_id` index of every new collection
// included), a GIN index on that field, in FerretDB's own transaction; indexes
// made before the trigger existed get theirs when the store starts.
import type pg from 'pg';

/**
 * FerretDB's session settings, as query parameters of its PostgreSQL URL. Its pool
 * stays at its 50; the processes' drivers are bounded to stay under it
 * (LOCAL_STORE_CLIENT_CONNECTIONS and LOCAL_STORE_CONNECTIONS in local-store.ts).
 */
export const FERRETDB_POSTGRES_PARAMS = { plan_cache_mode: 'force_custom_plan' } as const;

const INSTALL = `
CREATE OR REPLACE FUNCTION lpm_gin_for_index(index_oid oid) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  tbl oid;
  am text;
  first_key text;
  field text;
  gin_name text;
BEGIN
  SELECT i.indrelid, a.amname, pg_get_indexdef(i.indexrelid, 1, false)
    INTO tbl, am, first_key
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
   WHERE i.indexrelid = index_oid;
  IF am IS DISTINCT FROM 'btree' THEN RETURN; END IF;
  -- Only a top-level field: FerretDB pushes nothing nested down.
  field := substring(first_key FROM $re$^\\(\\(_jsonb -> '([^']+)'::text\\)\\)$$re$);
  IF field IS NULL THEN RETURN; END IF;
  gin_name := left((SELECT relname FROM pg_class WHERE oid = tbl), 40) || '_gin_' || left(md5(field), 12);
  IF EXISTS (SELECT 1 FROM pg_class c WHERE c.relname = gin_name
               AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = tbl)) THEN
    RETURN;
  END IF;
  EXECUTE format('CREATE INDEX %I ON %s USING gin ((_jsonb -> %L) jsonb_path_ops) WITH (fastupdate = off)', gin_name, tbl::regclass, field);
END
$fn$;

CREATE OR REPLACE FUNCTION lpm_gin_on_create_index() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  cmd record;
BEGIN
  FOR cmd IN SELECT objid FROM pg_event_trigger_ddl_commands() WHERE object_type = 'index' LOOP
    PERFORM lpm_gin_for_index(cmd.objid);
  END LOOP;
END
$fn$;

DROP EVENT TRIGGER IF EXISTS lpm_gin_on_create_index;
CREATE EVENT TRIGGER lpm_gin_on_create_index ON ddl_command_end
  WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION lpm_gin_on_create_index();

SELECT lpm_gin_for_index(i.indexrelid)
  FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_attribute col ON col.attrelid = t.oid
 WHERE col.attname = '_jsonb' AND t.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace);
`;

/**
 * Installs the trigger in FerretDB's database (a client connected to it, as a
 * superuser: event triggers need one) and indexes what is already there. Idempotent.
 */
export async function installGinIndexing(client: pg.Client): Promise<void> {
  await client.query(INSTALL);
}
