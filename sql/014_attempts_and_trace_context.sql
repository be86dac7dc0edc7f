-- Outbox Console schema, version 14: attempts per event and W3C trace
-- context (docs/PRODUCERS.md, "Attempts per event" and "Trace context";
-- docs/DECISIONS.md, "Attempts per event and trace context").
--
--  1. max_attempts: a producer may give an event its own limit of delivery
--     attempts; where it has none, the dispatcher's --max-attempts applies.
--     The claim, the nack, the release and the dead sweep read
--     coalesce(max_attempts, <the dispatcher's limit>).
--  2. traceparent and tracestate (W3C Trace Context, level 1): given to
--     outbox_enqueue, or read from the transaction-local settings
--     outbox.traceparent and outbox.tracestate. Dispatchers send them as the
--     traceparent and tracestate headers (docs/RUNNER-CONTRACT.md).
--  3. outbox_enqueue takes both; outbox_op_replay copies both to the copy.

-- 1. and 2. Columns ------------------------------------------------------------

-- W3C Trace Context level 1, traceparent: version 00, a trace id of 32 and
-- a parent id of 16 lower-case hex digits, neither all zeros, and 2 hex
-- digits of flags. NULL when the value is fine (or NULL), else what is wrong.
-- Lengths and translate() rather than bounded regular expressions: the
-- regular expression engine expands {32} into as many states, and every
-- enqueue with trace context runs these checks twice (the function and the
-- table's constraint). Only immutable operators (no format()), so that the
-- planner inlines it into the constraint.
CREATE FUNCTION outbox_traceparent_problem(p_value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN p_value IS NULL THEN NULL
        WHEN length(p_value) <> 55 OR translate(p_value, '0123456789abcdef', '') <> '---'
             OR substr(p_value, 3, 1) <> '-' OR substr(p_value, 36, 1) <> '-'
             OR substr(p_value, 53, 1) <> '-' THEN
            'it is not of the form 00-<32 hex digits trace id>-<16 hex digits parent id>-<2 hex digits flags> (lower case)'
        WHEN left(p_value, 2) <> '00' THEN
            'version ' || left(p_value, 2) || ' is not supported (only 00)'
        WHEN substr(p_value, 4, 32) = repeat('0', 32) THEN 'the trace id is all zeros'
        WHEN substr(p_value, 37, 16) = repeat('0', 16) THEN 'the parent id is all zeros'
        ELSE NULL
    END
$$;

-- W3C Trace Context level 1, tracestate: at most 512 characters, at most 32
-- comma-separated key=value members (empty members and spaces or tabs
-- around commas are allowed), each key once; keys are a simple key (a
-- lower-case letter, then up to 255 of a-z 0-9 _ - * /) or a tenant@system
-- key (up to 241 and 14 characters); values up to 256 printable ASCII
-- characters other than ',' and '=', not ending in a space. NULL when the
-- value is fine (or NULL). Unbounded patterns and lengths, for the reason
-- given above.
CREATE FUNCTION outbox_tracestate_problem(p_value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    v_member text;
    v_keys text[] := '{}';
    v_key text;
    v_value text;
    v_at integer;
    v_key_ok boolean;
BEGIN
    IF p_value IS NULL THEN
        RETURN NULL;
    END IF;
    IF length(p_value) > 512 THEN
        RETURN format('it is %s characters long, more than 512', length(p_value));
    END IF;
    FOREACH v_member IN ARRAY string_to_array(p_value, ',') LOOP
        v_member := btrim(v_member, E' \t');
        CONTINUE WHEN v_member = '';
        v_key := split_part(v_member, '=', 1);
        v_value := substr(v_member, length(v_key) + 2);
        v_at := strpos(v_key, '@');
        v_key_ok := CASE WHEN v_at = 0
                         THEN length(v_key) <= 256 AND v_key ~ '^[a-z][a-z0-9_*/-]*$'
                         ELSE v_at <= 242 AND length(v_key) - v_at <= 14
                              AND v_key ~ '^[a-z0-9][a-z0-9_*/-]*@[a-z][a-z0-9_*/-]*$' END;
        IF strpos(v_member, '=') = 0 OR NOT v_key_ok
           OR length(v_value) > 256 OR v_value !~ '^[ !-+.-<>-~-]*[!-+.-<>-~-]$' THEN
            RETURN format('the member "%s" is not key=value (a key of a-z 0-9 _ - * / and at most one @, '
                          'a value of printable ASCII without "," and "=")', left(v_member, 100));
        END IF;
        IF v_key = ANY (v_keys) THEN
            RETURN format('the key "%s" appears twice', v_key);
        END IF;
        v_keys := v_keys || v_key;
    END LOOP;
    IF cardinality(v_keys) > 32 THEN
        RETURN format('it has %s members, more than 32', cardinality(v_keys));
    END IF;
    RETURN NULL;
END
$$;

-- No defaults: adding the columns rewrites nothing. The constraints are NOT
-- VALID because every existing row has NULL in them; new rows are checked.
-- An event's own limit: at least one attempt, and no more than a dispatcher
-- can be set to in the console (outbox_enqueue says the same in words).
-- The trace context's functions run only for a row that has one: a function
-- call in a constraint costs every insert (an enqueue took half again as
-- long with them called on NULLs).
ALTER TABLE outbox_events
    ADD COLUMN max_attempts integer,
    ADD COLUMN traceparent text,
    ADD COLUMN tracestate text;
ALTER TABLE outbox_events
    ADD CONSTRAINT outbox_events_max_attempts_check
        CHECK (max_attempts BETWEEN 1 AND 1000) NOT VALID,
    ADD CONSTRAINT outbox_events_trace_context_check
        CHECK (traceparent IS NULL AND tracestate IS NULL
               OR traceparent IS NOT NULL AND outbox_traceparent_problem(traceparent) IS NULL
                  AND (tracestate IS NULL OR outbox_tracestate_problem(tracestate) IS NULL))
        NOT VALID;

-- Finding the events of one trace (outboxctl list --trace-id, the console's
-- filter): the trace id is characters 4 to 35 of traceparent. Partial: only
-- traced events have an entry.
CREATE INDEX outbox_events_trace_idx ON outbox_events (substr(traceparent, 4, 32))
    WHERE traceparent IS NOT NULL;

-- 3. outbox_enqueue ------------------------------------------------------------

-- A new signature, so the old one goes: with both, a call with fewer
-- arguments would match two functions. Every call of the old one (by
-- position or by name) calls this one the same way.
DROP FUNCTION outbox_enqueue(text, text, jsonb, text, uuid, text, text);

-- As in 012, and: the event's own maximum of attempts; its trace context,
-- from the arguments or else from the transaction-local settings
-- outbox.traceparent and outbox.tracestate (SET LOCAL, or set_config(...,
-- true)), so that an instrumented application sets it once per transaction.
-- A setting that was set in an earlier transaction of the session reads as
-- '' afterwards, which is no trace context.
CREATE FUNCTION outbox_enqueue(p_namespace text,
                               p_topic text,
                               p_payload jsonb,
                               p_dedupe_key text DEFAULT NULL,
                               p_tenant_id uuid DEFAULT NULL,
                               p_aggregate_type text DEFAULT NULL,
                               p_aggregate_id text DEFAULT NULL,
                               p_max_attempts integer DEFAULT NULL,
                               p_traceparent text DEFAULT NULL,
                               p_tracestate text DEFAULT NULL)
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
    v_traceparent text := p_traceparent;
    v_tracestate text := p_tracestate;
    v_origin text := 'p_traceparent';
    v_problem text;
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
    IF p_max_attempts NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'outbox_enqueue: max_attempts must be between 1 and 1000 (got %)',
                        p_max_attempts
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass NULL to use the dispatcher''s --max-attempts, or a limit from 1 to 1000.';
    END IF;
    -- The trace context: the arguments, else the transaction's settings.
    IF v_traceparent IS NULL THEN
        v_traceparent := nullif(current_setting('outbox.traceparent', true), '');
        v_origin := 'the setting outbox.traceparent';
        IF v_traceparent IS NOT NULL AND v_tracestate IS NULL THEN
            v_tracestate := nullif(current_setting('outbox.tracestate', true), '');
        END IF;
    END IF;
    IF v_traceparent IS NOT NULL THEN
        v_problem := outbox_traceparent_problem(v_traceparent);
    END IF;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'outbox_enqueue: traceparent "%" (from %) is not a W3C traceparent: %',
                        left(v_traceparent, 100), v_origin, v_problem
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the traceparent of the current span as the tracing library formats it, '
                         'e.g. ''00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'', or NULL.';
    END IF;
    IF v_tracestate IS NOT NULL AND v_traceparent IS NULL THEN
        RAISE EXCEPTION 'outbox_enqueue: a tracestate was given without a traceparent'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the traceparent as well (p_traceparent, or SET LOCAL outbox.traceparent), '
                         'or leave tracestate out.';
    END IF;
    IF v_tracestate IS NOT NULL THEN
        v_problem := outbox_tracestate_problem(v_tracestate);
    END IF;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'outbox_enqueue: the tracestate is not a W3C tracestate: %', v_problem
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the tracestate as the tracing library formats it, e.g. '
                         '''vendor1=value1,vendor2=value2'', or NULL.';
    END IF;

    LOOP
        -- held and blocked as in 011: a paused scope holds the new event, a
        -- dead event of its aggregate blocks it.
        INSERT INTO outbox_events AS e
               (id, namespace, topic, aggregate_type, aggregate_id, tenant_id, dedupe_key, payload,
                payload_bytes, held, blocked, max_attempts, traceparent, tracestate)
        VALUES (outbox_uuid_v7(), p_namespace, p_topic, p_aggregate_type, p_aggregate_id,
                p_tenant_id, p_dedupe_key, p_payload, v_bytes, outbox_paused(p_namespace, p_topic),
                p_aggregate_type IS NOT NULL AND p_aggregate_id IS NOT NULL
                AND outbox_aggregate_has_dead(p_aggregate_type, p_aggregate_id)
                AND outbox_aggregate_dead(p_aggregate_type, p_aggregate_id),
                p_max_attempts, v_traceparent, v_tracestate)
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

-- 4. Replay ------------------------------------------------------------------

-- As in 012, and the copy keeps the original's limit of attempts and trace
-- context: it is the same business event sent again, and its delivery
-- continues the trace that produced it.
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
                                        replay_of, held, max_attempts, traceparent, tracestate)
        SELECT outbox_uuid_v7(), s.namespace, s.topic, s.aggregate_type, s.aggregate_id,
               s.tenant_id, NULL, s.payload, s.payload_bytes, 'pending', s.id,
               outbox_paused(s.namespace, s.topic), s.max_attempts, s.traceparent, s.tracestate
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

-- 5. Grants and search paths -------------------------------------------------

REVOKE ALL ON FUNCTION outbox_enqueue(text, text, jsonb, text, uuid, text, text, integer, text, text)
    FROM PUBLIC;
REVOKE ALL ON FUNCTION outbox_op_replay(bigint, uuid[], timestamptz, bigint, boolean) FROM PUBLIC;

-- Dropping the old signature dropped its grant: producers of a database
-- whose roles exist keep enqueueing (sql/roles.sql says the same for new
-- databases).
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'outbox_producer') THEN
        GRANT EXECUTE ON FUNCTION
            outbox_enqueue(text, text, jsonb, text, uuid, text, text, integer, text, text)
            TO outbox_producer;
    END IF;
END
$$;

-- As at the end of 012: every SECURITY DEFINER function searches pg_catalog
-- first and pg_temp last (CREATE OR REPLACE dropped the replay's setting).
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
