-- Outbox Console schema, version 11: under aggregate order, events queued
-- behind a dead event cost the ordered claim nothing (docs/DECISIONS.md,
-- "Pausing without visiting the paused backlog").
--
-- An event whose aggregate has an earlier dead event cannot be delivered in
-- aggregate order until an operator requeues, cancels or purges that dead
-- event. Such an event carries blocked = true, and the ordered claim walks
-- an index of its own that leaves blocked (and held) events out:
-- outbox_events_ordered_claim_idx, built with the aggregate order's index by
-- `outboxctl migrate --aggregate-order` (sql/aggregate_order.sql). The
-- unordered claim does not look at the flag and delivers those events as
-- before.
--
-- Who keeps the flag: outbox_enqueue() and the insert trigger (an event
-- behind a dead one is blocked from the start); a trigger when an event
-- becomes dead (its later pending and processing events are blocked) and
-- when a dead event is requeued or deleted (those with no dead event left
-- before them are not). The dead events found are locked FOR SHARE, so a
-- concurrent requeue is waited for, never missed: a flag can be false where
-- it could be true (the ordered claim's own test still holds such an event
-- back), never true where the event may go. Marking and clearing only run
-- while aggregate order is on; enabling it sets every flag afresh.
--
-- Written to run again over itself (tests replay the migrations before it).

ALTER TABLE outbox_events ADD COLUMN IF NOT EXISTS blocked boolean NOT NULL DEFAULT false;

-- The due index with held and blocked events set apart: the due time of the
-- next event a claim can take reads one range (in aggregate order, not
-- blocked ones; otherwise the least of both), never the held or blocked
-- backlog. Pending events are still counted through it (its predicate is
-- unchanged); the two flags cost no room (alignment pads them anyway). Built
-- inside the migration's transaction, like the claim index in 010.
DO $$
BEGIN
    IF pg_get_indexdef('outbox_events_pending_due_idx'::regclass) NOT LIKE '%blocked%' THEN
        DROP INDEX outbox_events_pending_due_idx;
        CREATE INDEX outbox_events_pending_due_idx
            ON outbox_events (held, blocked, next_attempt_at) WHERE status = 'pending';
    END IF;
END
$$;

-- The dead events of each aggregate: the test above, and for every event
-- enqueued with an aggregate. Rows turn dead rarely: the hot path does not
-- write it.
CREATE INDEX IF NOT EXISTS outbox_events_dead_aggregate_idx
    ON outbox_events (aggregate_type, aggregate_id, created_at, id)
    WHERE status = 'dead' AND aggregate_type IS NOT NULL AND aggregate_id IS NOT NULL;

-- Whether an event of this aggregate created at (p_at, p_id) has a dead
-- event before it; locks the dead event it finds (see above). p_at NULL:
-- any dead event (a new event comes after all of them). A plpgsql call:
-- callers on the producer's path ask outbox_aggregate_has_dead() first.
CREATE OR REPLACE FUNCTION outbox_aggregate_dead(p_type text, p_aggregate text,
                                                 p_at timestamptz DEFAULT NULL,
                                                 p_id uuid DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF p_type IS NULL OR p_aggregate IS NULL THEN
        RETURN false;
    END IF;
    PERFORM FROM outbox_events d
      WHERE d.aggregate_type = p_type AND d.aggregate_id = p_aggregate AND d.status = 'dead'
        AND (p_at IS NULL OR (d.created_at, d.id) < (p_at, p_id))
      LIMIT 1
        FOR SHARE;
    RETURN FOUND;
END
$$;

-- The same without the lock, inlined where it is used: a new event is not
-- blocked unless this says so.
CREATE OR REPLACE FUNCTION outbox_aggregate_has_dead(p_type text, p_aggregate text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (SELECT FROM outbox_events d
                    WHERE d.aggregate_type = p_type AND d.aggregate_id = p_aggregate
                      AND d.status = 'dead')
$$;

-- Delivery in aggregate order is on while both of its indexes exist and are
-- valid (009 asked for the first only).
CREATE OR REPLACE FUNCTION outbox_aggregate_order_on() RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT count(*) = 2 FROM pg_catalog.pg_index
     WHERE indexrelid IN (to_regclass('outbox_events_aggregate_idx'),
                          to_regclass('outbox_events_ordered_claim_idx'))
       AND indisvalid
$$;

-- Sets every event's flag afresh (enabling aggregate order, and this
-- migration where it is on): a pass over the pending and processing events
-- that have an aggregate.
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
                                   AND (d.created_at, d.id) < (e.created_at, e.id));
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$$;

-- A dead event blocks the later events of its aggregate; one that stops
-- being dead (requeue, cancel's counterpart, purge, retention) unblocks those
-- with no dead event left before them. Reads the aggregate's range of
-- outbox_events_aggregate_idx, so only while aggregate order is on.
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
           AND (e.created_at, e.id) > (NEW.created_at, NEW.id);
    ELSE
        UPDATE outbox_events e SET blocked = false
         WHERE e.aggregate_type = OLD.aggregate_type AND e.aggregate_id = OLD.aggregate_id
           AND e.status IN ('pending', 'processing') AND e.blocked
           AND (e.created_at, e.id) >= (OLD.created_at, OLD.id)
           AND NOT outbox_aggregate_dead(e.aggregate_type, e.aggregate_id, e.created_at, e.id);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS outbox_events_block_dead ON outbox_events;
CREATE TRIGGER outbox_events_block_dead
    AFTER UPDATE OF status ON outbox_events
    FOR EACH ROW
    WHEN ((NEW.status = 'dead') <> (OLD.status = 'dead')
          AND NEW.aggregate_type IS NOT NULL AND NEW.aggregate_id IS NOT NULL)
    EXECUTE FUNCTION outbox_events_block();
DROP TRIGGER IF EXISTS outbox_events_block_gone ON outbox_events;
CREATE TRIGGER outbox_events_block_gone
    AFTER DELETE ON outbox_events
    FOR EACH ROW
    WHEN (OLD.status = 'dead' AND OLD.aggregate_type IS NOT NULL AND OLD.aggregate_id IS NOT NULL)
    EXECUTE FUNCTION outbox_events_block();

-- The insert trigger of 010 fills `blocked` too (the column's default is
-- false: an INSERT that names `held` and not `blocked` leaves it false,
-- which only costs the ordered claim a look).
CREATE OR REPLACE FUNCTION outbox_events_hold() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
AS $$
BEGIN
    NEW.held := NEW.status = 'pending' AND outbox_paused(NEW.namespace, NEW.topic);
    NEW.blocked := NEW.status IN ('pending', 'processing')
                   AND outbox_aggregate_has_dead(NEW.aggregate_type, NEW.aggregate_id)
                   AND outbox_aggregate_dead(NEW.aggregate_type, NEW.aggregate_id);
    RETURN NEW;
END
$$;

-- The producer API with the event blocked at once when its aggregate has a
-- dead event (for events with an aggregate, one probe of
-- outbox_events_dead_aggregate_idx; the locking call only when it finds one).
CREATE OR REPLACE FUNCTION outbox_enqueue(p_namespace text,
                                          p_topic text,
                                          p_payload jsonb,
                                          p_dedupe_key text DEFAULT NULL,
                                          p_tenant_id uuid DEFAULT NULL,
                                          p_aggregate_type text DEFAULT NULL,
                                          p_aggregate_id text DEFAULT NULL)
RETURNS TABLE (id uuid, inserted boolean)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
    v_id uuid;
BEGIN
    IF p_namespace IS NULL OR btrim(p_namespace) = '' THEN
        RAISE EXCEPTION 'outbox_enqueue: namespace must not be empty'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the name of the producing module, e.g. ''billing''.';
    END IF;
    IF p_topic IS NULL OR btrim(p_topic) = '' THEN
        RAISE EXCEPTION 'outbox_enqueue: topic must not be empty'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the event type, e.g. ''invoice.paid''.';
    END IF;
    IF p_payload IS NULL OR jsonb_typeof(p_payload) = 'null' THEN
        RAISE EXCEPTION 'outbox_enqueue: payload must be a JSON value, not null'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass an object such as ''{"invoice_id": 42}''::jsonb.';
    END IF;
    IF p_dedupe_key IS NOT NULL AND p_dedupe_key = '' THEN
        RAISE EXCEPTION 'outbox_enqueue: dedupe_key must be NULL or a non-empty string'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- modkit §1.6: when both are given, the dedupe key starts with the tenant.
    IF p_tenant_id IS NOT NULL AND p_dedupe_key IS NOT NULL
       AND NOT starts_with(lower(p_dedupe_key), p_tenant_id::text || '/') THEN
        RAISE EXCEPTION 'outbox_enqueue: dedupe_key "%" does not belong to tenant %',
                        p_dedupe_key, p_tenant_id
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Start the dedupe key with the tenant id and a slash, e.g. ''%s/<your key>''.',
                                p_tenant_id);
    END IF;

    LOOP
        INSERT INTO outbox_events AS e
               (id, namespace, topic, aggregate_type, aggregate_id, tenant_id, dedupe_key, payload,
                held, blocked)
        VALUES (outbox_uuid_v7(), p_namespace, p_topic, p_aggregate_type, p_aggregate_id,
                p_tenant_id, p_dedupe_key, p_payload, outbox_paused(p_namespace, p_topic),
                p_aggregate_type IS NOT NULL AND p_aggregate_id IS NOT NULL
                AND outbox_aggregate_has_dead(p_aggregate_type, p_aggregate_id)
                AND outbox_aggregate_dead(p_aggregate_type, p_aggregate_id))
        ON CONFLICT (dedupe_key, namespace, topic) WHERE dedupe_key IS NOT NULL DO NOTHING
        RETURNING e.id INTO v_id;
        IF v_id IS NOT NULL THEN
            id := v_id;
            inserted := true;
            RETURN NEXT;
            RETURN;
        END IF;

        -- A row with this key exists (or a concurrent transaction just
        -- committed one: ON CONFLICT waited for it). In READ COMMITTED this
        -- statement sees it.
        SELECT e.id INTO v_id
          FROM outbox_events AS e
         WHERE e.dedupe_key = p_dedupe_key AND e.namespace = p_namespace AND e.topic = p_topic;
        IF FOUND THEN
            id := v_id;
            inserted := false;
            RETURN NEXT;
            RETURN;
        END IF;
        -- The conflicting row was purged in between: insert again.
    END LOOP;
END
$$;

-- Where aggregate order is on already, its new index is built here, inside
-- the migration's transaction (one read of the table; writers wait), and
-- every flag is set.
DO $$
BEGIN
    IF to_regclass('outbox_events_aggregate_idx') IS NOT NULL
       AND to_regclass('outbox_events_ordered_claim_idx') IS NULL THEN
        CREATE INDEX outbox_events_ordered_claim_idx ON outbox_events (created_at, id)
            WHERE status NOT IN ('delivered', 'dead') AND locked_until IS NULL AND NOT held AND NOT blocked;
        PERFORM outbox_aggregate_block_all();
    END IF;
END
$$;

DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'outbox_enqueue(text, text, jsonb, text, uuid, text, text)',
        'outbox_events_hold()',
        'outbox_events_block()',
        'outbox_aggregate_block_all()',
        'outbox_aggregate_dead(text, text, timestamptz, uuid)']
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
    -- Takes row locks: only the functions and triggers above call it.
    REVOKE ALL ON FUNCTION outbox_aggregate_dead(text, text, timestamptz, uuid) FROM PUBLIC;
    REVOKE ALL ON FUNCTION outbox_aggregate_block_all() FROM PUBLIC;
END
$$;
