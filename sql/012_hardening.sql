-- Outbox Console schema, version 12: hardening, second pass. What each part
-- does is in docs/SECURITY.md ("What the database enforces for
-- dispatchers", "Producers: payload size and tenants' keys", "Retention",
-- "Registry bounds", "The schema and the search path"; sql/roles.sql adds
-- "Limits per login"); the design choices in docs/DECISIONS.md ("Hardening
-- in the database, second pass").
--
--  1. Limits the owner sets (outbox_limits): the largest payload
--     outbox_enqueue accepts and the bytes one claim may take.
--  2. outbox_enqueue: a dedupe key in the form of a tenant's keys needs that
--     tenant, and a call never answers with another tenant's event.
--  3. A dispatcher changes events only as its own operations could
--     (row-level security), and records a failure only with the nack that
--     ends its attempt (a trigger).
--  4. Retention: dispatchers only, dead events only once they have been
--     dead that long, each one named in the audit.
--  5. The registry keeps every input within bounds.
--  6. Replaying a copy counts as replaying its original.
--  7. The audit's and the pauses' texts: no control characters, bounded,
--     and an operator run always names its user, host and confirmed count.
--  8. Every function with a pinned search path searches pg_catalog first.

-- 1. Limits --------------------------------------------------------------

-- One row, changed by the owner with UPDATE (the roles may only read it):
--     UPDATE outbox_limits SET max_payload_bytes = 4 * 1024 * 1024;
CREATE TABLE outbox_limits (
    only_row           boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    -- The largest payload outbox_enqueue accepts, in bytes of its JSON text.
    max_payload_bytes  integer NOT NULL DEFAULT 1048576
        CHECK (max_payload_bytes BETWEEN 1024 AND 268435456),
    -- A claim stops adding events once the payloads it took pass this many
    -- bytes (it always takes at least one event).
    claim_budget_bytes bigint  NOT NULL DEFAULT 8388608
        CHECK (claim_budget_bytes BETWEEN 1024 AND 1073741824)
);
INSERT INTO outbox_limits DEFAULT VALUES;

-- The claim reads the row: without it nothing could be claimed.
CREATE FUNCTION outbox_limits_keep_row() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'outbox_limits always has its one row: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Change a limit with UPDATE outbox_limits SET ...';
END
$$;
CREATE TRIGGER outbox_limits_keep_row
    BEFORE DELETE ON outbox_limits
    FOR EACH ROW EXECUTE FUNCTION outbox_limits_keep_row();
CREATE TRIGGER outbox_limits_no_truncate
    BEFORE TRUNCATE ON outbox_limits
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_limits_keep_row();

-- The size of the payload's JSON text, written by outbox_enqueue (and copied
-- by replay); the claim's byte budget adds these up. NULL for rows written
-- otherwise (directly by the owner, or before this version): the claim then
-- counts their stored size. No default: adding the column rewrites nothing.
ALTER TABLE outbox_events ADD COLUMN payload_bytes integer;

-- 2. outbox_enqueue ---------------------------------------------------------

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
    v_tenant uuid;
    v_bytes integer;
    v_max integer;
    v_key_tenant text;
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
    v_bytes := octet_length(p_payload::text);
    SELECT l.max_payload_bytes INTO v_max FROM outbox_limits l;
    IF v_bytes > v_max THEN
        RAISE EXCEPTION 'outbox_enqueue: the payload is % bytes, more than the maximum of % bytes',
                        v_bytes, v_max
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Send a reference to the data (an id, a URL) instead of the data, or '
                         'have the outbox''s owner raise the limit: UPDATE outbox_limits SET '
                         'max_payload_bytes = ...';
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
    -- And the other way round: a key in the form of a tenant's keys belongs
    -- to that tenant. Without this, a producer could take another tenant's
    -- key first, so that the tenant's own event would be dropped as
    -- "already enqueued".
    v_key_tenant := substring(p_dedupe_key FROM
        '^([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})/');
    IF v_key_tenant IS NOT NULL AND p_tenant_id IS NULL THEN
        RAISE EXCEPTION 'outbox_enqueue: dedupe_key "%" is a key of tenant %, but no tenant was given',
                        p_dedupe_key, v_key_tenant
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Pass the tenant (p_tenant_id => ''%s''), or use a key that does not start with a tenant id and a slash.',
                                v_key_tenant);
    END IF;

    LOOP
        -- held and blocked as in 011: a paused scope holds the new event, a
        -- dead event of its aggregate blocks it.
        INSERT INTO outbox_events AS e
               (id, namespace, topic, aggregate_type, aggregate_id, tenant_id, dedupe_key, payload,
                payload_bytes, held, blocked)
        VALUES (outbox_uuid_v7(), p_namespace, p_topic, p_aggregate_type, p_aggregate_id,
                p_tenant_id, p_dedupe_key, p_payload, v_bytes, outbox_paused(p_namespace, p_topic),
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
        SELECT e.id, e.tenant_id INTO v_id, v_tenant
          FROM outbox_events AS e
         WHERE e.dedupe_key = p_dedupe_key AND e.namespace = p_namespace AND e.topic = p_topic;
        IF FOUND THEN
            -- Never another tenant's event, not even its id (a row written
            -- before this version may hold a key of the wrong tenant).
            IF v_tenant IS DISTINCT FROM p_tenant_id THEN
                RAISE EXCEPTION 'outbox_enqueue: dedupe_key "%" is taken by an event of another tenant',
                                p_dedupe_key
                    USING ERRCODE = 'unique_violation',
                          HINT = 'Ask the outbox''s operators to look into the event with this key.';
            END IF;
            id := v_id;
            inserted := false;
            RETURN NEXT;
            RETURN;
        END IF;
        -- The conflicting row was purged in between: insert again.
    END LOOP;
END
$$;

-- 3. The dispatcher's changes ------------------------------------------------

-- A dispatcher's login has UPDATE on the delivery columns of outbox_events:
-- the claim, ack, nack, release and dead sweep are plain statements on the
-- hot path. Row-level security holds every role that may update the table
-- without owning it (a dispatcher) to what a sequence of dispatcher
-- operations could do as well:
--  - only live events change (USING: pending or processing); delivered and
--    dead are final for a dispatcher;
--  - the row it writes has updated_at = the time of the statement
--    (statement_timestamp()), so that no change can be backdated under an
--    operator's sealed preview; a lease (processing) of at most 24 days;
--    processing, delivered and dead with at least one attempt (the event
--    was claimed); delivered_at = the time of the acknowledgement, and on
--    no other state; a retry at most 10 years ahead.
-- What a dispatcher may still do is what its own operations could do in a
-- sequence anyway: claim what is not due yet, end any lease (the lease
-- holder is a value the dispatcher chooses), give an attempt back
-- (release), move events with attempts to dead (the sweep): see
-- docs/SECURITY.md, "What the database enforces for dispatchers".
--
-- Policies, not a trigger: they add an expression to the statement (a few
-- comparisons per row), where any row trigger on UPDATE re-reads every
-- updated row, for everyone; on the claim and ack of a dispatcher that cost
-- about a tenth more database time (docs/DECISIONS.md). Not FORCE: the
-- owner, superusers and the SECURITY DEFINER functions (which run as the
-- owner) are not concerned. Reading, and inserts and deletes by roles an
-- administrator granted them to, stay as they were.
ALTER TABLE outbox_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY outbox_events_read ON outbox_events FOR SELECT USING (true);
CREATE POLICY outbox_events_insert ON outbox_events FOR INSERT WITH CHECK (true);
CREATE POLICY outbox_events_delete ON outbox_events FOR DELETE USING (true);
-- Intervals in hours: adding days or years to a timestamptz goes through the
-- time zone. greatest(): a clock stepped back during the statement does not
-- refuse the statement's own time.
CREATE POLICY outbox_events_delivery ON outbox_events FOR UPDATE
    USING (status IN ('pending', 'processing'))
    WITH CHECK (
            updated_at BETWEEN statement_timestamp()
                           AND greatest(clock_timestamp(), statement_timestamp())
        AND CASE status
            WHEN 'processing' THEN
                    attempts >= 1
                AND locked_until > now()
                AND locked_until <= now() + interval '576 hours'
                AND delivered_at IS NULL
            WHEN 'delivered' THEN
                    attempts >= 1
                AND delivered_at BETWEEN now() AND greatest(clock_timestamp(), now())
            WHEN 'pending' THEN
                    next_attempt_at <= now() + interval '87600 hours'
                AND delivered_at IS NULL
            ELSE -- dead
                    attempts >= 1
                AND delivered_at IS NULL
            END);

-- A dispatcher records a failure with the nack that ends its attempt, in
-- the same statement (OutboxStore's nack): the event has just gone back to
-- pending or to dead at that attempt, and the attempt has no row yet. The
-- time is the statement's. SECURITY DEFINER: dispatchers may not read
-- outbox_attempts.
CREATE FUNCTION outbox_attempts_guard() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
AS $$
DECLARE
    v_status text;
    v_attempts integer;
    v_updated timestamptz;
BEGIN
    SELECT e.status, e.attempts, e.updated_at INTO v_status, v_attempts, v_updated
      FROM outbox_events e WHERE e.id = NEW.event_id;
    IF NOT FOUND OR v_status NOT IN ('pending', 'dead') OR v_attempts <> NEW.attempt
       OR v_updated < statement_timestamp() THEN
        RAISE EXCEPTION 'permission denied to record attempt % of event %: a failure is recorded only by the nack that ends that attempt',
                        NEW.attempt, NEW.event_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF EXISTS (SELECT FROM outbox_attempts a
                WHERE a.event_id = NEW.event_id AND a.attempt = NEW.attempt) THEN
        RAISE EXCEPTION 'permission denied to record attempt % of event %: it is recorded already',
                        NEW.attempt, NEW.event_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.http_status IS NOT NULL AND NEW.http_status NOT BETWEEN 100 AND 599 THEN
        RAISE EXCEPTION 'outbox_attempts: http_status % is not an HTTP status', NEW.http_status
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    NEW.attempted_at := statement_timestamp();
    NEW.duration_ms := greatest(NEW.duration_ms, 0);
    RETURN NEW;
END
$$;

CREATE TRIGGER outbox_attempts_dispatcher_guard
    BEFORE INSERT ON outbox_attempts
    FOR EACH ROW
    WHEN (NOT has_table_privilege('outbox_attempts'::regclass, 'TRIGGER'))
    EXECUTE FUNCTION outbox_attempts_guard();

-- 4. Retention ---------------------------------------------------------------

-- As in 008, with two rules more: a dead event goes only once it has been
-- dead (unchanged) that long, not merely created that long ago, so that an
-- event that just died stays for an operator to see; and the ids of deleted
-- dead events are recorded in outbox_audit_events, as a purge records them
-- (delivered events are counted only: there are millions a day). Operators
-- no longer run it (below and sql/roles.sql): they purge through
-- outbox_op_purge, under the sealed preview's rules.
CREATE OR REPLACE FUNCTION outbox_retention_delete(p_status text, p_older_than_ms bigint,
                                                   p_batch integer, p_host text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_cutoff timestamptz;
    v_ids uuid[];
    v_count bigint;
    v_audit bigint;
BEGIN
    IF p_status IS NULL OR p_status NOT IN ('delivered', 'dead') THEN
        RAISE EXCEPTION 'outbox_retention_delete: status must be delivered or dead, not %', p_status
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_older_than_ms IS NULL OR p_older_than_ms < 60000 THEN
        RAISE EXCEPTION 'outbox_retention_delete: keep events at least one minute'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_batch IS NULL OR p_batch < 1 OR p_batch > 10000 THEN
        RAISE EXCEPTION 'outbox_retention_delete: batch must be between 1 and 10000'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_cutoff := now() - least(p_older_than_ms, 3153600000000) * interval '1 millisecond';
    WITH deleted AS (
        DELETE FROM outbox_events
         WHERE id = ANY (ARRAY(
               SELECT id FROM outbox_events
                WHERE status = p_status
                  AND created_at < v_cutoff
                  AND (p_status = 'delivered' OR updated_at < v_cutoff)
                ORDER BY created_at, id
                LIMIT p_batch
                  FOR UPDATE SKIP LOCKED))
        RETURNING id)
    SELECT array_agg(d.id) INTO v_ids FROM deleted d;
    v_count := coalesce(cardinality(v_ids), 0);
    IF v_count > 0 THEN
        INSERT INTO outbox_audit (db_user, os_user, host, application, action, filter, affected,
                                  finished_at)
        VALUES (session_user, NULL, p_host, 'retention', 'retention',
                format('status=%s created_before=now-%sms', p_status, p_older_than_ms)
                || CASE WHEN p_status = 'dead' THEN format(' dead_before=now-%sms', p_older_than_ms)
                        ELSE '' END,
                v_count, now())
        RETURNING id INTO v_audit;
        IF p_status = 'dead' THEN
            INSERT INTO outbox_audit_events (audit_id, event_id)
            SELECT v_audit, d FROM unnest(v_ids) d;
        END IF;
    END IF;
    RETURN v_count;
END
$$;

ALTER FUNCTION outbox_retention_delete(text, bigint, integer, text) SET enable_bitmapscan = off;
ALTER FUNCTION outbox_retention_delete(text, bigint, integer, text) SET enable_seqscan = off;

-- 5. Registry bounds ---------------------------------------------------------

-- Text a person reads in a terminal or the console: no control characters
-- (C0, DEL, C1: terminal escapes, line breaks) and at most p_max characters.
-- NULL passes (the column's own NOT NULL decides).
CREATE FUNCTION outbox_plain_text(p_text text, p_max integer) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_text IS NULL OR (length(p_text) <= p_max AND p_text !~ '[\x01-\x1f\x7f-\x9f]') $$;

-- Rows that break the bounds could not be shown anyway (an interval of
-- millennia is "timestamp out of range" for every reader); they belong to
-- no dispatcher that registered with a sensible configuration, which
-- registers again at its next heartbeat.
DELETE FROM outbox_dispatchers
 WHERE NOT (outbox_plain_text(host, 255) AND host <> ''
            AND pid BETWEEN 0 AND 2147483647
            AND outbox_plain_text(version, 100) AND outbox_plain_text(application, 100)
            AND outbox_plain_text(db_user, 128) AND outbox_plain_text(namespace, 200)
            AND outbox_plain_text(runner_url, 2048)
            AND concurrency BETWEEN 1 AND 100000
            AND heartbeat_interval BETWEEN interval '100 milliseconds' AND interval '1 hour'
            AND started_at BETWEEN '2000-01-01' AND registered_at + interval '1 day'
            AND state ~ '^[a-z_]{1,32}$'
            AND in_flight BETWEEN 0 AND 10000000
            AND delivered_per_s BETWEEN 0 AND 1e9 AND failed_per_s BETWEEN 0 AND 1e9
            AND delivered_total >= 0);

ALTER TABLE outbox_dispatchers
    ADD CONSTRAINT outbox_dispatchers_host_check
        CHECK (outbox_plain_text(host, 255) AND host <> ''),
    ADD CONSTRAINT outbox_dispatchers_pid_check CHECK (pid BETWEEN 0 AND 2147483647),
    ADD CONSTRAINT outbox_dispatchers_text_check
        CHECK (outbox_plain_text(version, 100) AND outbox_plain_text(application, 100)
               AND outbox_plain_text(db_user, 128) AND outbox_plain_text(namespace, 200)
               AND outbox_plain_text(runner_url, 2048)),
    ADD CONSTRAINT outbox_dispatchers_concurrency_check CHECK (concurrency BETWEEN 1 AND 100000),
    -- A dispatcher is gone after three missed heartbeats: an interval beyond
    -- an hour would show a dead dispatcher as alive for hours.
    ADD CONSTRAINT outbox_dispatchers_heartbeat_interval_check
        CHECK (heartbeat_interval BETWEEN interval '100 milliseconds' AND interval '1 hour'),
    ADD CONSTRAINT outbox_dispatchers_started_at_check
        CHECK (started_at BETWEEN '2000-01-01' AND registered_at + interval '1 day'),
    ADD CONSTRAINT outbox_dispatchers_state_check CHECK (state ~ '^[a-z_]{1,32}$'),
    ADD CONSTRAINT outbox_dispatchers_counters_check
        CHECK (in_flight BETWEEN 0 AND 10000000
               AND delivered_per_s BETWEEN 0 AND 1e9 AND failed_per_s BETWEEN 0 AND 1e9
               AND delivered_total >= 0);

-- 6. Replay -----------------------------------------------------------------

-- As in 010 (the copy is held at once when its scope is paused), with the
-- rule applied to the original a copy descends from:
-- replaying a copy makes one more copy of the original, so it needs
-- p_again as well.
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
        SELECT s.replay_of, s.id INTO v_original, v_copy
          FROM outbox_events s
         WHERE s.id = ANY(v_ids) AND s.replay_of IS NOT NULL
         ORDER BY s.created_at, s.id
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'outbox_op_replay: event % is a copy of event %, which was already replayed; replaying the copy makes another copy',
                            v_copy, v_original
                USING ERRCODE = 'check_violation',
                      HINT = 'Ask for it explicitly (outboxctl replay --again), or leave this event out.';
        END IF;
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
                                        tenant_id, dedupe_key, payload, payload_bytes, status,
                                        replay_of, held)
        SELECT outbox_uuid_v7(), s.namespace, s.topic, s.aggregate_type, s.aggregate_id,
               s.tenant_id, NULL, s.payload, s.payload_bytes, 'pending', s.id,
               outbox_paused(s.namespace, s.topic)
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

-- 7. Audit and pause texts ---------------------------------------------------

-- New rows only (NOT VALID): the audit is append-only, and what it already
-- holds stays as it was written.
ALTER TABLE outbox_audit
    ADD CONSTRAINT outbox_audit_text_check
        CHECK (outbox_plain_text(os_user, 128) AND outbox_plain_text(host, 255)
               AND outbox_plain_text(application, 100) AND outbox_plain_text(filter, 4000))
        NOT VALID;
ALTER TABLE outbox_pauses
    ADD CONSTRAINT outbox_pauses_text_check
        CHECK (outbox_plain_text(reason, 1000) AND outbox_plain_text(os_user, 128)
               AND outbox_plain_text(host, 255))
        NOT VALID;

-- As in 002, and an operator run must say who, where and how many: the
-- operating-system user and the host (what the client says about itself;
-- db_user is the session's), a filter text, and the confirmed count, which
-- the functions never exceed. Without a count a run had no limit.
CREATE OR REPLACE FUNCTION outbox_op_begin(p_action text,
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
    IF p_confirmed IS NULL OR p_confirmed < 0 THEN
        RAISE EXCEPTION 'outbox_op_begin: the number of events the operator confirmed is required (got %)',
                        coalesce(p_confirmed::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Preview the run and pass the count the operator confirmed: the run never changes more.';
    END IF;
    IF btrim(coalesce(p_os_user, '')) = '' OR btrim(coalesce(p_host, '')) = '' THEN
        RAISE EXCEPTION 'outbox_op_begin: the operating-system user and the host of the operator are required'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF btrim(coalesce(p_filter, '')) = '' THEN
        RAISE EXCEPTION 'outbox_op_begin: the filter text (what the run matches) is required'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT (outbox_plain_text(p_filter, 4000) AND outbox_plain_text(p_os_user, 128)
            AND outbox_plain_text(p_host, 255) AND outbox_plain_text(p_application, 100)) THEN
        RAISE EXCEPTION 'outbox_op_begin: the filter, user, host and application must be plain text (no control characters) of at most 4000, 128, 255 and 100 characters'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO outbox_audit (os_user, host, application, action, filter, confirmed)
    VALUES (p_os_user, p_host, nullif(p_application, ''), p_action, p_filter, p_confirmed)
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;

-- 8. Grants and search paths -------------------------------------------------

REVOKE ALL ON FUNCTION outbox_enqueue(text, text, jsonb, text, uuid, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION outbox_retention_delete(text, bigint, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION outbox_op_replay(bigint, uuid[], timestamptz, bigint, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION outbox_op_begin(text, text, text, text, text, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION outbox_attempts_guard() FROM PUBLIC;
REVOKE ALL ON FUNCTION outbox_limits_keep_row() FROM PUBLIC;

-- Databases whose roles exist get the changed grants now (as in 006), so
-- that upgrading without --with-roles does not leave operators able to run
-- retention. sql/roles.sql says the same for new databases.
DO $$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY['outbox_producer', 'outbox_dispatcher', 'outbox_operator',
                                  'outbox_viewer'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_roles WHERE rolname = v_role);
        EXECUTE format('GRANT SELECT ON outbox_limits TO %I', v_role);
    END LOOP;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'outbox_operator') THEN
        REVOKE EXECUTE ON FUNCTION outbox_retention_delete(text, bigint, integer, text)
          FROM outbox_operator;
    END IF;
END
$$;

-- A SECURITY DEFINER function runs with the owner's rights. Its search path
-- names pg_catalog first, so that no object of the outbox's schema can stand
-- in for a built-in of the same signature, and pg_temp last (otherwise a
-- caller's temporary table could stand in for an outbox table). Objects
-- with a better-matching signature are kept out by the schema itself: only
-- its owner may create objects there (`outboxctl migrate` refuses a schema
-- where others may). Every outbox function that pins its path, those of
-- earlier versions included (CREATE OR REPLACE above dropped their settings).
DO $$
DECLARE
    v_function regprocedure;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = current_schema()::regnamespace
           AND p.proname LIKE 'outbox\_%'
           AND (p.prosecdef
                OR p.proname = 'outbox_limits_keep_row'
                OR EXISTS (SELECT FROM unnest(p.proconfig) c WHERE c LIKE 'search\_path=%'))
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp',
                       v_function, current_schema());
    END LOOP;
END
$$;
