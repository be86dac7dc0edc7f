-- Outbox Console schema, version 2: operator actions enforced by the database.
--
-- Operators change events only through the outbox_op_* functions below
-- (SECURITY DEFINER, granted in sql/roles.sql). Each function checks the
-- states its action may touch, changes only rows that did not change since
-- the operator's preview, writes the audit trail in the same transaction and
-- never changes more rows than the operator confirmed. The audit log is
-- append-only: who acted is the session's user, not a value the client sends.
-- See docs/SECURITY.md.

-- How many events the operator confirmed (the sealed preview); NULL when the
-- run was confirmed without a count (e.g. `--yes` without a preview).
ALTER TABLE outbox_audit ADD COLUMN confirmed bigint;
ALTER TABLE outbox_audit ADD CONSTRAINT outbox_audit_confirmed_check
    CHECK (confirmed IS NULL OR (confirmed >= 0 AND affected <= confirmed));

-- The states each operator action may touch. The one table in SQL; the
-- client's copy (store::allowedStates()) is checked against it by the tests.
CREATE FUNCTION outbox_op_allowed_states(p_action text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE p_action
        WHEN 'retry'   THEN ARRAY['pending']
        WHEN 'requeue' THEN ARRAY['dead']
        WHEN 'cancel'  THEN ARRAY['pending', 'dead']
        WHEN 'purge'   THEN ARRAY['delivered', 'dead']
        WHEN 'replay'  THEN ARRAY['delivered', 'dead']
    END::text[]
$$;

-- The audit log is append-only, for everyone including the owner. A new row
-- always records the session's user and the current time. While a run is
-- open (finished_at IS NULL) its counters may grow and it may be closed;
-- nothing else of a row ever changes, and no row is deleted. To prune old
-- entries the table owner has to disable this trigger explicitly
-- (ALTER TABLE outbox_audit DISABLE TRIGGER outbox_audit_append_only), which
-- no outbox_* role can do.
CREATE FUNCTION outbox_audit_guard() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.db_user := session_user;
        NEW.at := now();
        RETURN NEW;
    END IF;
    IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'outbox_audit' THEN
        IF OLD.finished_at IS NULL
           AND (NEW.id, NEW.at, NEW.db_user, NEW.os_user, NEW.host, NEW.application,
                NEW.action, NEW.filter, NEW.confirmed)
               IS NOT DISTINCT FROM
               (OLD.id, OLD.at, OLD.db_user, OLD.os_user, OLD.host, OLD.application,
                OLD.action, OLD.filter, OLD.confirmed)
           AND NEW.affected >= OLD.affected AND NEW.skipped >= OLD.skipped THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Audit entries are written by the outbox_op_* functions and never changed.';
END
$$;

CREATE TRIGGER outbox_audit_stamp
    BEFORE INSERT ON outbox_audit
    FOR EACH ROW EXECUTE FUNCTION outbox_audit_guard();
CREATE TRIGGER outbox_audit_append_only
    BEFORE UPDATE OR DELETE ON outbox_audit
    FOR EACH ROW EXECUTE FUNCTION outbox_audit_guard();
CREATE TRIGGER outbox_audit_events_append_only
    BEFORE UPDATE OR DELETE ON outbox_audit_events
    FOR EACH ROW EXECUTE FUNCTION outbox_audit_guard();

CREATE FUNCTION outbox_audit_refuse_truncate() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: TRUNCATE refused', TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER outbox_audit_no_truncate
    BEFORE TRUNCATE ON outbox_audit
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_audit_refuse_truncate();
CREATE TRIGGER outbox_audit_events_no_truncate
    BEFORE TRUNCATE ON outbox_audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_audit_refuse_truncate();

-- Opens the audit entry of one operator run and returns its id. db_user is
-- the session's user (set by the trigger); os_user, host and application
-- are what the client says about itself. p_confirmed: the number of events
-- the operator confirmed; the run can never change more.
CREATE FUNCTION outbox_op_begin(p_action text,
                                p_filter text,
                                p_os_user text,
                                p_host text,
                                p_application text,
                                p_confirmed bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_id bigint;
BEGIN
    IF outbox_op_allowed_states(p_action) IS NULL THEN
        RAISE EXCEPTION 'outbox_op_begin: unknown action "%"', p_action
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use retry, requeue, cancel, purge or replay.';
    END IF;
    IF p_confirmed IS NOT NULL AND p_confirmed < 0 THEN
        RAISE EXCEPTION 'outbox_op_begin: confirmed count must not be negative (got %)', p_confirmed
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO outbox_audit (os_user, host, application, action, filter, confirmed)
    VALUES (nullif(p_os_user, ''), nullif(p_host, ''), nullif(p_application, ''), p_action,
            coalesce(p_filter, ''), p_confirmed)
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;

-- Closes an open audit entry of this session's user.
CREATE FUNCTION outbox_op_finish(p_audit_id bigint) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
BEGIN
    UPDATE outbox_audit SET finished_at = now()
     WHERE id = p_audit_id AND db_user = session_user AND finished_at IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'outbox_op_finish: audit entry % is not an open run of %', p_audit_id,
                        session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END
$$;

-- Internal (not granted): checks that p_audit_id is an open run of this
-- session's user for p_action, then locks the rows of p_ids that are in a
-- state the action allows and unchanged since p_unchanged_since, oldest
-- first, skipping rows locked by others, and never more than the run has
-- left of its confirmed count.
CREATE FUNCTION outbox_op_lock(p_audit_id bigint, p_action text, p_ids uuid[],
                               p_unchanged_since timestamptz)
RETURNS uuid[]
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_audit outbox_audit%ROWTYPE;
    v_left bigint;
    v_ids uuid[];
BEGIN
    SELECT * INTO v_audit FROM outbox_audit WHERE id = p_audit_id FOR UPDATE;
    IF NOT FOUND OR v_audit.db_user <> session_user OR v_audit.finished_at IS NOT NULL
       OR v_audit.action <> p_action THEN
        RAISE EXCEPTION 'outbox_op_%: audit entry % is not an open % run of %', p_action,
                        p_audit_id, p_action, session_user
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Start the run with outbox_op_begin() in this session''s role.';
    END IF;
    IF p_unchanged_since IS NULL THEN
        RAISE EXCEPTION 'outbox_op_%: the time of the preview (p_unchanged_since) is required',
                        p_action
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_left := CASE WHEN v_audit.confirmed IS NULL THEN NULL
                   ELSE greatest(0, v_audit.confirmed - v_audit.affected) END;
    SELECT coalesce(array_agg(l.id ORDER BY l.created_at, l.id), '{}') INTO v_ids
      FROM (SELECT e.id, e.created_at
              FROM outbox_events e
             WHERE e.id = ANY(p_ids)
               AND e.status = ANY(outbox_op_allowed_states(p_action))
               AND e.updated_at <= p_unchanged_since
             ORDER BY e.created_at, e.id
             LIMIT v_left
               FOR UPDATE SKIP LOCKED) l;
    RETURN v_ids;
END
$$;

-- Internal (not granted): adds one batch to the run's counters. Rows the
-- client planned for this batch but that were not changed count as skipped.
CREATE FUNCTION outbox_op_count(p_audit_id bigint, p_changed bigint, p_planned bigint)
RETURNS void
LANGUAGE sql VOLATILE
AS $$
    UPDATE outbox_audit
       SET affected = affected + p_changed,
           skipped = skipped + greatest(0, coalesce(p_planned, 0) - p_changed)
     WHERE id = p_audit_id
$$;

-- The five actions. Each takes the run's audit id, the candidate ids of one
-- batch, the time of the preview (rows changed since are left alone) and
-- how many rows the client planned for the batch (for the skipped count),
-- and returns the ids it changed.

CREATE FUNCTION outbox_op_retry(p_audit_id bigint, p_ids uuid[], p_unchanged_since timestamptz,
                                p_planned bigint DEFAULT NULL)
RETURNS TABLE (event_id uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
    v_ids uuid[] := outbox_op_lock(p_audit_id, 'retry', p_ids, p_unchanged_since);
    v_changed uuid[];
    v_n bigint;
BEGIN
    -- least(): a row that is already overdue keeps its place.
    WITH changed AS (
        UPDATE outbox_events e
           SET next_attempt_at = least(e.next_attempt_at, now()), updated_at = now()
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

CREATE FUNCTION outbox_op_requeue(p_audit_id bigint, p_ids uuid[], p_unchanged_since timestamptz,
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
               locked_until = NULL, updated_at = now()
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

-- last_error becomes "cancelled by <db user>[/<os user>][@<host>][: <reason>]",
-- from the audit entry (the database user is the session's).
CREATE FUNCTION outbox_op_cancel(p_audit_id bigint, p_ids uuid[], p_unchanged_since timestamptz,
                                 p_planned bigint DEFAULT NULL, p_reason text DEFAULT NULL)
RETURNS TABLE (event_id uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
    v_ids uuid[] := outbox_op_lock(p_audit_id, 'cancel', p_ids, p_unchanged_since);
    v_message text;
    v_changed uuid[];
    v_n bigint;
BEGIN
    SELECT 'cancelled by ' || a.db_user || coalesce('/' || a.os_user, '')
           || coalesce('@' || a.host, '') || coalesce(': ' || nullif(btrim(p_reason), ''), '')
      INTO v_message
      FROM outbox_audit a WHERE a.id = p_audit_id;
    -- The earlier failures stay in outbox_attempts.
    WITH changed AS (
        UPDATE outbox_events e
           SET status = 'dead', last_error = v_message, locked_by = NULL, locked_until = NULL,
               updated_at = now()
         WHERE e.id = ANY(v_ids)
        RETURNING e.id),
    logged AS (INSERT INTO outbox_audit_events (audit_id, event_id)
               SELECT p_audit_id, c.id FROM changed c)
    SELECT coalesce(array_agg(c.id), '{}') INTO v_changed FROM changed c;
    v_n := cardinality(v_changed);
    RETURN QUERY SELECT unnest(v_changed);
    PERFORM outbox_op_count(p_audit_id, v_n, p_planned);
END
$$;

-- outbox_attempts rows go with ON DELETE CASCADE; the audit trail stays.
CREATE FUNCTION outbox_op_purge(p_audit_id bigint, p_ids uuid[], p_unchanged_since timestamptz,
                                p_planned bigint DEFAULT NULL)
RETURNS TABLE (event_id uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
#variable_conflict use_column
DECLARE
    v_ids uuid[] := outbox_op_lock(p_audit_id, 'purge', p_ids, p_unchanged_since);
    v_changed uuid[];
    v_n bigint;
BEGIN
    WITH changed AS (
        DELETE FROM outbox_events e WHERE e.id = ANY(v_ids) RETURNING e.id),
    logged AS (INSERT INTO outbox_audit_events (audit_id, event_id)
               SELECT p_audit_id, c.id FROM changed c)
    SELECT coalesce(array_agg(c.id), '{}') INTO v_changed FROM changed c;
    v_n := cardinality(v_changed);
    RETURN QUERY SELECT unnest(v_changed);
    PERFORM outbox_op_count(p_audit_id, v_n, p_planned);
END
$$;

-- A new event, not a reset of the old one: the original keeps its delivery
-- record. dedupe_key is NULL because the original still holds the key and
-- the unique index would refuse the copy; replay_of links the two instead.
-- An event that already has a copy is refused unless p_again: replaying it
-- again makes one more copy, which the operator has to ask for.
CREATE FUNCTION outbox_op_replay(p_audit_id bigint, p_ids uuid[], p_unchanged_since timestamptz,
                                 p_planned bigint DEFAULT NULL, p_again boolean DEFAULT false)
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
                                        tenant_id, dedupe_key, payload, status, replay_of)
        SELECT outbox_uuid_v7(), s.namespace, s.topic, s.aggregate_type, s.aggregate_id,
               s.tenant_id, NULL, s.payload, 'pending', s.id
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

-- SECURITY DEFINER functions run with the owner's rights: pin their search
-- path to the schema of the outbox with pg_temp last (see outbox_enqueue in
-- 001_init.sql), and let only roles granted them (sql/roles.sql) call them.
DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'outbox_op_allowed_states(text)',
        'outbox_audit_guard()',
        'outbox_audit_refuse_truncate()',
        'outbox_op_begin(text, text, text, text, text, bigint)',
        'outbox_op_finish(bigint)',
        'outbox_op_lock(bigint, text, uuid[], timestamptz)',
        'outbox_op_count(bigint, bigint, bigint)',
        'outbox_op_retry(bigint, uuid[], timestamptz, bigint)',
        'outbox_op_requeue(bigint, uuid[], timestamptz, bigint)',
        'outbox_op_cancel(bigint, uuid[], timestamptz, bigint, text)',
        'outbox_op_purge(bigint, uuid[], timestamptz, bigint)',
        'outbox_op_replay(bigint, uuid[], timestamptz, bigint, boolean)']
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
END
$$;

-- Databases migrated before this version granted operators direct writes:
-- take them back here, so that upgrading without --with-roles does not
-- leave them (sql/roles.sql grants the functions).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_operator') THEN
        REVOKE INSERT, UPDATE, DELETE, TRUNCATE
            ON outbox_events, outbox_attempts, outbox_audit, outbox_audit_events
          FROM outbox_operator;
    END IF;
END
$$;
