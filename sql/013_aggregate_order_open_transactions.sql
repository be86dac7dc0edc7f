-- Outbox Console schema, version 13: aggregate order holds while a
-- producer's transaction is still open (docs/DECISIONS.md, "Aggregate order
-- and open producer transactions").
--
-- The ordered claim sees committed events only. Ordered by (created_at, id),
-- where created_at is the start of the producing transaction, an event
-- committed by a later transaction could go before an earlier one that was
-- still being written. Each event now records the id of the transaction
-- that wrote it (producer_xid, a column default: outbox_enqueue and plain
-- INSERTs alike). Under aggregate order the events of one aggregate go in
-- the order of (producer_xid, created_at, id): transaction ids are handed
-- out at a transaction's first write, so this is the order in which the
-- producers began writing and, within one transaction, the order of
-- outbox_enqueue's ids. The ordered claim takes an event of an aggregate
-- only when every transaction with a smaller id has ended
-- (pg_snapshot_xmin of the claim's snapshot is above its producer_xid):
-- no such transaction can still commit an earlier event, and one that has
-- no id yet will sort after it. Events written before this migration read
-- producer_xid 0: before every later one, and among themselves in the
-- (created_at, id) order they had.
--
-- Written to run again over itself (tests replay the migrations before it).

-- A constant default first (no table rewrite), then the transaction's id
-- for every new row.
ALTER TABLE outbox_events ADD COLUMN IF NOT EXISTS producer_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE outbox_events ALTER COLUMN producer_xid SET DEFAULT pg_current_xact_id();

COMMENT ON COLUMN outbox_events.producer_xid IS
    'The transaction that wrote the event (0: before schema version 13); '
    'aggregate order is (producer_xid, created_at, id).';

-- The aggregate's earlier events in the new order: where aggregate order
-- is on, its index is built again here, inside the migration's transaction
-- (one read of the table; writers wait), like 011 built its claim index.
DO $$
BEGIN
    IF coalesce(pg_get_indexdef(to_regclass('outbox_events_aggregate_idx')), 'producer_xid')
       NOT LIKE '%producer_xid%' THEN
        DROP INDEX outbox_events_aggregate_idx;
        CREATE INDEX outbox_events_aggregate_idx
            ON outbox_events (aggregate_type, aggregate_id, producer_xid, created_at, id)
            WHERE status IN ('pending', 'processing', 'dead')
              AND aggregate_type IS NOT NULL AND aggregate_id IS NOT NULL;
    END IF;
END
$$;

-- Whether the aggregate has a dead event before (p_xid, p_at, p_id) in
-- aggregate order; locks the dead event it finds, as outbox_aggregate_dead
-- (011) does. Reads outbox_events_dead_aggregate_idx by the aggregate.
CREATE OR REPLACE FUNCTION outbox_aggregate_dead_before(p_type text, p_aggregate text,
                                                        p_xid xid8, p_at timestamptz, p_id uuid)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF p_type IS NULL OR p_aggregate IS NULL THEN
        RETURN false;
    END IF;
    PERFORM FROM outbox_events d
      WHERE d.aggregate_type = p_type AND d.aggregate_id = p_aggregate AND d.status = 'dead'
        AND (d.producer_xid, d.created_at, d.id) < (p_xid, p_at, p_id)
      LIMIT 1
        FOR SHARE;
    RETURN FOUND;
END
$$;

-- 011's flag in the new order: a dead event blocks the events after it;
-- one that stops being dead unblocks those with no dead event left before
-- them.
CREATE OR REPLACE FUNCTION outbox_events_block() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
AS $$
BEGIN
    IF NOT outbox_aggregate_order_on() THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.status = 'dead' THEN
        UPDATE outbox_events e SET blocked = true
         WHERE e.aggregate_type = NEW.aggregate_type AND e.aggregate_id = NEW.aggregate_id
           AND e.status IN ('pending', 'processing') AND NOT e.blocked
           AND (e.producer_xid, e.created_at, e.id) > (NEW.producer_xid, NEW.created_at, NEW.id);
    ELSE
        UPDATE outbox_events e SET blocked = false
         WHERE e.aggregate_type = OLD.aggregate_type AND e.aggregate_id = OLD.aggregate_id
           AND e.status IN ('pending', 'processing') AND e.blocked
           AND (e.producer_xid, e.created_at, e.id) >= (OLD.producer_xid, OLD.created_at, OLD.id)
           AND NOT outbox_aggregate_dead_before(e.aggregate_type, e.aggregate_id,
                                                e.producer_xid, e.created_at, e.id);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION outbox_aggregate_block_all() RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_count bigint;
BEGIN
    UPDATE outbox_events e SET blocked = NOT e.blocked
     WHERE e.status IN ('pending', 'processing')
       AND e.aggregate_type IS NOT NULL AND e.aggregate_id IS NOT NULL
       AND e.blocked <> EXISTS (SELECT FROM outbox_events d
                                 WHERE d.aggregate_type = e.aggregate_type
                                   AND d.aggregate_id = e.aggregate_id AND d.status = 'dead'
                                   AND (d.producer_xid, d.created_at, d.id)
                                       < (e.producer_xid, e.created_at, e.id));
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$$;

-- outbox_enqueue and the insert trigger block a new event when its
-- aggregate has any dead event: a new event used to come after all of them.
-- In the new order a transaction that began writing before a dead event's
-- can still add an event before it, which no requeue of the dead event
-- would unblock (those after it are unblocked). Such an event is let go
-- here; only events flagged blocked pay for the look.
CREATE OR REPLACE FUNCTION outbox_events_unblock_new() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
AS $$
BEGIN
    NEW.blocked := outbox_aggregate_dead_before(NEW.aggregate_type, NEW.aggregate_id,
                                                NEW.producer_xid, NEW.created_at, NEW.id);
    RETURN NEW;
END
$$;

-- After outbox_events_hold_new (triggers of one event fire by name).
DROP TRIGGER IF EXISTS outbox_events_unblock_new ON outbox_events;
CREATE TRIGGER outbox_events_unblock_new
    BEFORE INSERT ON outbox_events
    FOR EACH ROW WHEN (NEW.blocked) EXECUTE FUNCTION outbox_events_unblock_new();

-- Where aggregate order is on, every flag afresh in the new order.
DO $$
BEGIN
    IF outbox_aggregate_order_on() THEN
        PERFORM outbox_aggregate_block_all();
    END IF;
END
$$;

DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'outbox_events_block()',
        'outbox_events_unblock_new()',
        'outbox_aggregate_block_all()',
        'outbox_aggregate_dead_before(text, text, xid8, timestamptz, uuid)']
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f,
                       current_schema());
    END LOOP;
    -- Takes row locks: only the functions and triggers above call it.
    REVOKE ALL ON FUNCTION outbox_aggregate_dead_before(text, text, xid8, timestamptz, uuid)
        FROM PUBLIC;
END
$$;
