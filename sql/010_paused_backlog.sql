-- Outbox Console schema, version 10: a paused backlog costs the claim
-- nothing (docs/DECISIONS.md, "Pausing without visiting the paused
-- backlog").
--
-- A pending event that a pause holds carries held = true, and the claim's
-- index leaves it out: the claim, the claim floor and the due-time lookups
-- never step over paused events, however many there are. Every writer keeps
-- the flag in step with outbox_pauses:
--   * new events: outbox_enqueue() and replay set it, any other INSERT gets
--     it from a trigger (the column has no default, so an INSERT that does
--     not name it is the trigger's to fill);
--   * requeue sets it as it makes a dead event pending again; a held event
--     that dies (dead sweep, cancel) keeps it, which nothing reads: every
--     index and read of held events is of pending ones. No UPDATE trigger:
--     a BEFORE UPDATE row trigger locks every row an ack updates (one more
--     WAL record per event);
--   * pausing and resuming queue the scope's existing events in
--     outbox_pause_work, which outbox_pause_continue() works off in bounded
--     batches, each its own transaction: the client that paused or resumed
--     drives it, and every dispatcher finishes what such a client left.
-- The claim keeps its per-row test against outbox_pauses: an event that is
-- paused but not yet held (in flight when the pause came, or while the batches
-- run) is never claimed, only stepped over.
--
-- Written to run again over itself (tests replay the migrations before it).

ALTER TABLE outbox_events ADD COLUMN IF NOT EXISTS held boolean NOT NULL DEFAULT false;
-- Existing rows keep false; a new row that does not name the column is
-- filled by outbox_events_hold_new below (NOT NULL is checked after it).
ALTER TABLE outbox_events ALTER COLUMN held DROP DEFAULT;

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_constraint
                    WHERE conname = 'outbox_events_held_check'
                      AND conrelid = 'outbox_events'::regclass) THEN
        ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_held_check
            CHECK (NOT held OR status IN ('pending', 'dead'));
    END IF;
END
$$;

-- Whether a pause holds events of this namespace and topic. Plain SQL, so
-- that it is inlined where it is used.
CREATE OR REPLACE FUNCTION outbox_paused(p_namespace text, p_topic text) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (SELECT FROM outbox_pauses p
                    WHERE p.namespace = p_namespace AND (p.topic IS NULL OR p.topic = p_topic))
$$;

-- The claim index without held events, and held events in creation order
-- for the console's pages and for releasing them (the due index sets them
-- apart in 011). Built inside the migration's transaction: each build reads
-- the table once and holds off writers meanwhile (docs/PERFORMANCE.md, "A
-- paused backlog").
DO $$
BEGIN
    IF pg_get_indexdef('outbox_events_claim_idx'::regclass) NOT LIKE '%held%' THEN
        DROP INDEX outbox_events_claim_idx;
        CREATE INDEX outbox_events_claim_idx ON outbox_events (created_at, id)
            WHERE status IN ('pending', 'processing') AND NOT held;
    END IF;
END
$$;
CREATE INDEX IF NOT EXISTS outbox_events_held_idx ON outbox_events (created_at, id)
    WHERE held AND status = 'pending';

CREATE OR REPLACE FUNCTION outbox_events_hold() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    NEW.held := NEW.status = 'pending' AND outbox_paused(NEW.namespace, NEW.topic);
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS outbox_events_hold_new ON outbox_events;
CREATE TRIGGER outbox_events_hold_new
    BEFORE INSERT ON outbox_events
    FOR EACH ROW WHEN (NEW.held IS NULL) EXECUTE FUNCTION outbox_events_hold();
-- Events coming back to pending from processing (nack, release) are left
-- unheld: only the few in flight when a pause came can be paused, and the
-- claim's per-row test keeps them.

-- Existing events of a scope whose pause started (hold) or ended (release)
-- and that have not been brought in line yet. The cursor is the last event
-- looked at, in the order of the index walked (the claim index for hold,
-- outbox_events_held_idx for release).
CREATE TABLE IF NOT EXISTS outbox_pause_work (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace        text        NOT NULL,
    topic            text,                  -- NULL: the whole namespace
    hold             boolean     NOT NULL,  -- true: hold; false: release
    after_created_at timestamptz NOT NULL DEFAULT '-infinity',
    after_id         uuid        NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000',
    moved            bigint      NOT NULL DEFAULT 0, -- events held or released so far
    queued_at        timestamptz NOT NULL DEFAULT now()
);

-- The producer API (001) with the event held at once when its namespace or
-- topic is paused: one probe of outbox_pauses_scope_idx, no trigger call.
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
                held)
        VALUES (outbox_uuid_v7(), p_namespace, p_topic, p_aggregate_type, p_aggregate_id,
                p_tenant_id, p_dedupe_key, p_payload, outbox_paused(p_namespace, p_topic))
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

-- Requeue (002) holds what it makes pending again where a pause says so.
CREATE OR REPLACE FUNCTION outbox_op_requeue(p_audit_id bigint, p_ids uuid[],
                                             p_unchanged_since timestamptz,
                                             p_planned bigint DEFAULT NULL)
RETURNS TABLE (event_id uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
    v_ids uuid[] := outbox_op_lock(p_audit_id, 'requeue', p_ids, p_unchanged_since);
    v_changed uuid[];
    v_n bigint;
BEGIN
    -- last_error stays: the operator (and the next failure) can still see
    -- why the event died; outbox_attempts keeps the full history anyway.
    WITH changed AS (
        UPDATE outbox_events e
           SET status = 'pending', attempts = 0, next_attempt_at = now(), locked_by = NULL,
               locked_until = NULL, updated_at = now(),
               held = outbox_paused(e.namespace, e.topic)
         WHERE e.id = ANY(v_ids)
        RETURNING e.id),
    logged AS (INSERT INTO outbox_audit_events (audit_id, event_id)
               SELECT p_audit_id, c.id FROM changed c)
    SELECT coalesce(array_agg(c.id), '{}') INTO v_changed FROM changed c;
    v_n := cardinality(v_changed);
    RETURN QUERY SELECT unnest(v_changed);
    PERFORM outbox_op_count(p_audit_id, v_n, p_planned);
    IF v_n > 0 THEN
        PERFORM pg_notify('outbox_events', '');
    END IF;
END
$$;

-- Replay (002): the copy is held at once when its scope is paused.
CREATE OR REPLACE FUNCTION outbox_op_replay(p_audit_id bigint, p_ids uuid[],
                                            p_unchanged_since timestamptz,
                                            p_planned bigint DEFAULT NULL,
                                            p_again boolean DEFAULT false)
RETURNS TABLE (event_id uuid, replay_of uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
    v_ids uuid[] := outbox_op_lock(p_audit_id, 'replay', p_ids, p_unchanged_since);
    v_original uuid;
    v_copy uuid;
    v_changed uuid[];
    v_originals uuid[];
    v_n bigint;
BEGIN
    IF NOT coalesce(p_again, false) THEN
        SELECT c.replay_of, c.id INTO v_original, v_copy
          FROM outbox_events c
         WHERE c.replay_of = ANY(v_ids)
         ORDER BY c.created_at, c.id
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'outbox_op_replay: event % was already replayed (copy %); replaying it again makes another copy',
                            v_original, v_copy
                USING ERRCODE = 'check_violation',
                      HINT = 'Ask for it explicitly (outboxctl replay --again), or leave this event out.';
        END IF;
    END IF;
    WITH created AS (
        INSERT INTO outbox_events AS n (id, namespace, topic, aggregate_type, aggregate_id,
                                        tenant_id, dedupe_key, payload, status, replay_of, held)
        SELECT outbox_uuid_v7(), s.namespace, s.topic, s.aggregate_type, s.aggregate_id,
               s.tenant_id, NULL, s.payload, 'pending', s.id, outbox_paused(s.namespace, s.topic)
          FROM outbox_events s
         WHERE s.id = ANY(v_ids)
         ORDER BY s.created_at, s.id
        RETURNING n.id, n.replay_of),
    logged AS (INSERT INTO outbox_audit_events (audit_id, event_id)
               SELECT p_audit_id, c.id FROM created c
               UNION ALL SELECT p_audit_id, c.replay_of FROM created c)
    SELECT coalesce(array_agg(c.id), '{}'), coalesce(array_agg(c.replay_of), '{}')
      INTO v_changed, v_originals
      FROM created c;
    v_n := cardinality(v_changed);
    RETURN QUERY SELECT * FROM unnest(v_changed, v_originals);
    PERFORM outbox_op_count(p_audit_id, v_n, p_planned);
END
$$;

-- Pause (003) and queue the scope's pending events to be held. Everything
-- else as before: pausing what is paused replaces the reason, the audit row
-- is written here. The events are held by outbox_pause_continue().
CREATE OR REPLACE FUNCTION outbox_pause(p_namespace text, p_topic text, p_reason text,
                                        p_os_user text DEFAULT NULL, p_host text DEFAULT NULL,
                                        p_application text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_id bigint;
    v_scope text;
BEGIN
    IF p_namespace IS NULL OR btrim(p_namespace) = '' THEN
        RAISE EXCEPTION 'outbox_pause: namespace must not be empty'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_topic IS NOT NULL AND btrim(p_topic) = '' THEN
        RAISE EXCEPTION 'outbox_pause: topic must be NULL (the whole namespace) or a topic name'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_reason IS NULL OR btrim(p_reason) = '' THEN
        RAISE EXCEPTION 'outbox_pause: a reason is required'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Say why, e.g. ''billing endpoint down, INC-42''.';
    END IF;
    INSERT INTO outbox_pauses AS p (namespace, topic, reason, os_user, host)
    VALUES (p_namespace, p_topic, p_reason, p_os_user, p_host)
    ON CONFLICT (namespace, coalesce(topic, '')) DO UPDATE
       SET reason = excluded.reason, paused_by = session_user, os_user = excluded.os_user,
           host = excluded.host, paused_at = now()
    RETURNING p.id INTO v_id;
    v_scope := format('namespace=%s', p_namespace)
               || coalesce(format(' topic=%s', p_topic), '');
    INSERT INTO outbox_audit (db_user, os_user, host, application, action, filter, affected,
                              finished_at)
    VALUES (session_user, p_os_user, p_host, p_application, 'pause',
            v_scope || format(' reason=%s', p_reason), 1, now());
    -- A release of the same scope (or inside it) has nothing left to do; a
    -- hold already queued for the scope starts over.
    DELETE FROM outbox_pause_work w
     WHERE w.namespace = p_namespace
       AND (p_topic IS NULL OR w.topic IS NOT DISTINCT FROM p_topic);
    INSERT INTO outbox_pause_work (namespace, topic, hold) VALUES (p_namespace, p_topic, true);
    RETURN v_id;
END
$$;

-- Resume (003) and queue the scope's held events to be released. Returns how
-- many pauses ended; the release is queued even when none did, so that
-- resuming again finishes a release that was interrupted.
CREATE OR REPLACE FUNCTION outbox_resume(p_namespace text, p_topic text,
                                         p_os_user text DEFAULT NULL, p_host text DEFAULT NULL,
                                         p_application text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_count bigint;
BEGIN
    DELETE FROM outbox_pauses
     WHERE namespace = p_namespace AND (p_topic IS NULL OR topic = p_topic);
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count > 0 THEN
        INSERT INTO outbox_audit (db_user, os_user, host, application, action, filter, affected,
                                  finished_at)
        VALUES (session_user, p_os_user, p_host, p_application, 'resume',
                format('namespace=%s', p_namespace) || coalesce(format(' topic=%s', p_topic), ''),
                v_count, now());
        PERFORM pg_notify('outbox_events', '');
    END IF;
    DELETE FROM outbox_pause_work w
     WHERE w.namespace = p_namespace
       AND (p_topic IS NULL OR w.topic IS NOT DISTINCT FROM p_topic);
    IF p_namespace IS NOT NULL
       AND EXISTS (SELECT FROM outbox_events WHERE held AND status = 'pending') THEN
        INSERT INTO outbox_pause_work (namespace, topic, hold)
        VALUES (p_namespace, p_topic, false);
    END IF;
    RETURN v_count;
END
$$;

-- One bounded step of queued pause work: looks at the next p_batch events
-- of one queued scope (the given one, or with p_namespace NULL the oldest
-- one nobody is working on), holds those a pause covers (hold) or releases those none covers
-- any more (release), and moves the cursor on; the scope's work is done when
-- fewer than p_batch events were left to look at. Each event is checked
-- against outbox_pauses itself, so the step can only make `held` agree with
-- the pauses: it can neither pause nor resume anything, which is why
-- dispatchers may run it. Returns the events changed and whether the
-- scope's work (or, for NULL, any work) is left.
CREATE OR REPLACE FUNCTION outbox_pause_continue(p_namespace text, p_topic text,
                                                 p_batch integer DEFAULT 5000)
RETURNS TABLE (changed bigint, more boolean)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    w outbox_pause_work%ROWTYPE;
    v_seen integer;
    v_last_at timestamptz;
    v_last_id uuid;
    v_ids uuid[];
BEGIN
    IF p_batch IS NULL OR p_batch < 1 OR p_batch > 100000 THEN
        RAISE EXCEPTION 'outbox_pause_continue: batch must be between 1 and 100000'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_namespace IS NULL THEN
        -- A dispatcher: whatever nobody is working on.
        SELECT * INTO w FROM outbox_pause_work q ORDER BY q.id LIMIT 1 FOR UPDATE SKIP LOCKED;
    ELSE
        -- The client that paused or resumed: waits for a batch of its scope
        -- that a dispatcher is running.
        SELECT * INTO w FROM outbox_pause_work q
         WHERE q.namespace = p_namespace AND q.topic IS NOT DISTINCT FROM p_topic
         ORDER BY q.id LIMIT 1 FOR UPDATE;
    END IF;
    IF NOT FOUND THEN
        changed := 0;
        more := false;
        RETURN NEXT;
        RETURN;
    END IF;
    IF w.hold THEN
        -- The claim index in order from the cursor: pending events that are
        -- not held yet (processing ones are looked at and passed).
        SELECT count(*), max(s.created_at),
               (array_agg(s.id ORDER BY s.created_at DESC, s.id DESC))[1],
               array_agg(s.id) FILTER (WHERE s.status = 'pending' AND s.namespace = w.namespace
                                         AND (w.topic IS NULL OR s.topic = w.topic)
                                         AND outbox_paused(s.namespace, s.topic))
          INTO v_seen, v_last_at, v_last_id, v_ids
          FROM (SELECT e.id, e.created_at, e.status, e.namespace, e.topic
                  FROM outbox_events e
                 WHERE e.status IN ('pending', 'processing') AND NOT e.held
                   AND (e.created_at, e.id) > (w.after_created_at, w.after_id)
                 ORDER BY e.created_at, e.id
                 LIMIT p_batch) s;
        UPDATE outbox_events e SET held = true
         WHERE e.id = ANY (ARRAY(SELECT x.id FROM outbox_events x
                                  WHERE x.id = ANY (v_ids) AND x.status = 'pending'
                                    AND NOT x.held
                                    FOR UPDATE SKIP LOCKED));
    ELSE
        -- The held events in order from the cursor; release those of the
        -- scope that no pause holds any more.
        SELECT count(*), max(s.created_at),
               (array_agg(s.id ORDER BY s.created_at DESC, s.id DESC))[1],
               array_agg(s.id) FILTER (WHERE s.namespace = w.namespace
                                         AND (w.topic IS NULL OR s.topic = w.topic)
                                         AND NOT outbox_paused(s.namespace, s.topic))
          INTO v_seen, v_last_at, v_last_id, v_ids
          FROM (SELECT e.id, e.created_at, e.namespace, e.topic
                  FROM outbox_events e
                 WHERE e.held AND e.status = 'pending'
                   AND (e.created_at, e.id) > (w.after_created_at, w.after_id)
                 ORDER BY e.created_at, e.id
                 LIMIT p_batch) s;
        UPDATE outbox_events e SET held = false
         WHERE e.id = ANY (ARRAY(SELECT x.id FROM outbox_events x
                                  WHERE x.id = ANY (v_ids) AND x.held AND x.status = 'pending'
                                    FOR UPDATE SKIP LOCKED));
    END IF;
    GET DIAGNOSTICS changed = ROW_COUNT;
    IF changed > 0 AND NOT w.hold THEN
        PERFORM pg_notify('outbox_events', '');
    END IF;
    IF v_seen < p_batch THEN
        DELETE FROM outbox_pause_work WHERE id = w.id;
    ELSE
        UPDATE outbox_pause_work
           SET after_created_at = v_last_at, after_id = v_last_id, moved = moved + changed
         WHERE id = w.id;
    END IF;
    more := v_seen >= p_batch
            OR EXISTS (SELECT FROM outbox_pause_work q
                        WHERE q.id <> w.id
                          AND (p_namespace IS NULL
                               OR (q.namespace = p_namespace
                                   AND q.topic IS NOT DISTINCT FROM p_topic)));
    RETURN NEXT;
END
$$;

-- As in 002, 003 and 008: pin the search path of the SECURITY DEFINER
-- functions (CREATE OR REPLACE resets it; grants stay), let only the roles
-- granted them call the new ones, and price bitmap and sequential scans out
-- of the batch step so that it walks its index in order whatever the
-- statistics say.
DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'outbox_enqueue(text, text, jsonb, text, uuid, text, text)',
        'outbox_op_requeue(bigint, uuid[], timestamptz, bigint)',
        'outbox_op_replay(bigint, uuid[], timestamptz, bigint, boolean)',
        'outbox_pause(text, text, text, text, text, text)',
        'outbox_resume(text, text, text, text, text)',
        'outbox_pause_continue(text, text, integer)',
        'outbox_events_hold()']
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
    END LOOP;
    REVOKE ALL ON FUNCTION outbox_pause_continue(text, text, integer) FROM PUBLIC;
    ALTER FUNCTION outbox_pause_continue(text, text, integer) SET enable_bitmapscan = off;
    ALTER FUNCTION outbox_pause_continue(text, text, integer) SET enable_seqscan = off;
    -- As 006 does for its functions: grant where the roles exist already
    -- (sql/roles.sql grants them when applied later).
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'outbox_dispatcher') THEN
        GRANT SELECT ON outbox_pause_work TO outbox_dispatcher, outbox_operator, outbox_viewer;
        GRANT EXECUTE ON FUNCTION outbox_pause_continue(text, text, integer)
            TO outbox_dispatcher, outbox_operator;
    END IF;
END
$$;
