-- Outbox Console schema, version 1.
--
-- Applied by `outboxctl migrate` inside one transaction and recorded in
-- outbox_schema_version. Objects are created in the first schema of the
-- search_path of the migrating session (normally "public").

-- UUID version 7 (RFC 9562): 48 bits of unix milliseconds, then random bits.
-- Built from a random v4 uuid: overwrite the first 6 bytes with the time and
-- flip the version nibble from 0100 to 0111 (bits 52 and 53).
CREATE FUNCTION outbox_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$
    SELECT encode(
        set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                    PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                    FROM 1 FOR 6),
            52, 1), 53, 1),
        'hex')::uuid
$$;

CREATE TABLE outbox_events (
    id              uuid        PRIMARY KEY,
    namespace       text        NOT NULL,
    topic           text        NOT NULL,
    aggregate_type  text,
    aggregate_id    text,
    tenant_id       uuid,
    dedupe_key      text,
    payload         jsonb       NOT NULL,
    status          text        NOT NULL DEFAULT 'pending',
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    locked_by       uuid,
    locked_until    timestamptz,
    last_error      text,
    delivered_at    timestamptz,
    replay_of       uuid,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT outbox_events_status_check
        CHECK (status IN ('pending', 'processing', 'delivered', 'dead')),
    CONSTRAINT outbox_events_namespace_check CHECK (btrim(namespace) <> ''),
    CONSTRAINT outbox_events_topic_check CHECK (btrim(topic) <> ''),
    CONSTRAINT outbox_events_payload_check CHECK (jsonb_typeof(payload) <> 'null'),
    CONSTRAINT outbox_events_attempts_check CHECK (attempts >= 0),
    CONSTRAINT outbox_events_lease_check
        CHECK (status <> 'processing' OR (locked_by IS NOT NULL AND locked_until IS NOT NULL))
)
-- The live set is small and churns fast while delivered rows pile up: vacuum
-- this table early and unthrottled, and always clean its indexes. Without
-- index cleanup, VACUUM skips the indexes when few heap pages changed and dead
-- entries accumulate at the head of the claim index, where every claim has to
-- step over them.
WITH (autovacuum_vacuum_scale_factor = 0.01,
      autovacuum_vacuum_threshold = 1000,
      autovacuum_vacuum_insert_scale_factor = 0.05,
      autovacuum_analyze_scale_factor = 0.02,
      autovacuum_vacuum_cost_delay = 0,
      vacuum_index_cleanup = on);

-- The claim query: status IN (pending, processing), ORDER BY created_at, id.
CREATE INDEX outbox_events_claim_idx ON outbox_events (created_at, id)
    WHERE status IN ('pending', 'processing');
-- Due-time lookups and "retrying" counts for the pending set.
CREATE INDEX outbox_events_pending_due_idx ON outbox_events (next_attempt_at)
    WHERE status = 'pending';
-- Lease expiry (the modkit index(locked_until)), only where a lease exists.
CREATE INDEX outbox_events_lease_idx ON outbox_events (locked_until)
    WHERE status = 'processing';
-- Keyset pages of the terminal sets, newest first, and purge by age.
CREATE INDEX outbox_events_delivered_idx ON outbox_events (created_at, id)
    WHERE status = 'delivered';
CREATE INDEX outbox_events_dead_idx ON outbox_events (created_at, id)
    WHERE status = 'dead';
-- Idempotent enqueue. dedupe_key leads so that a lookup by key alone can use it.
CREATE UNIQUE INDEX outbox_events_dedupe_idx ON outbox_events (dedupe_key, namespace, topic)
    WHERE dedupe_key IS NOT NULL;
CREATE INDEX outbox_events_tenant_idx ON outbox_events (tenant_id, created_at)
    WHERE tenant_id IS NOT NULL;
CREATE INDEX outbox_events_replay_of_idx ON outbox_events (replay_of)
    WHERE replay_of IS NOT NULL;

-- Wake-up hint for dispatchers and consoles. Statement level with a constant
-- payload: a transaction that inserts many rows sends one notification, and
-- PostgreSQL folds duplicates within a transaction. Never data.
CREATE FUNCTION outbox_notify() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM pg_notify('outbox_events', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER outbox_events_notify
    AFTER INSERT ON outbox_events
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

-- One row per failed delivery attempt.
CREATE TABLE outbox_attempts (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     uuid        NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
    attempt      integer     NOT NULL,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    worker_id    uuid,
    http_status  integer,
    duration_ms  bigint      NOT NULL DEFAULT 0,
    error        text        NOT NULL
);
CREATE INDEX outbox_attempts_event_idx ON outbox_attempts (event_id, id);

-- One row per operator action; the events it touched in outbox_audit_events.
CREATE TABLE outbox_audit (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    db_user     text        NOT NULL DEFAULT session_user,
    os_user     text,
    host        text,
    application text,
    action      text        NOT NULL,
    filter      text        NOT NULL,
    affected    bigint      NOT NULL DEFAULT 0,
    skipped     bigint      NOT NULL DEFAULT 0,
    finished_at timestamptz,
    CONSTRAINT outbox_audit_action_check
        CHECK (action IN ('retry', 'requeue', 'cancel', 'purge', 'replay'))
);
CREATE INDEX outbox_audit_at_idx ON outbox_audit (at);

-- Purged events keep their audit trail, so no foreign key to outbox_events.
CREATE TABLE outbox_audit_events (
    audit_id bigint NOT NULL REFERENCES outbox_audit (id) ON DELETE CASCADE,
    event_id uuid   NOT NULL,
    PRIMARY KEY (event_id, audit_id)
);

-- The producer API: call inside the transaction that makes the business
-- change. Returns the event id, and inserted = false when an event with the
-- same (namespace, topic, dedupe_key) already exists ("already enqueued").
CREATE FUNCTION outbox_enqueue(p_namespace text,
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
               (id, namespace, topic, aggregate_type, aggregate_id, tenant_id, dedupe_key, payload)
        VALUES (outbox_uuid_v7(), p_namespace, p_topic, p_aggregate_type, p_aggregate_id,
                p_tenant_id, p_dedupe_key, p_payload)
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

-- SECURITY DEFINER: pin the search path to the schema the outbox was created
-- in, with pg_temp explicitly last (otherwise it is searched first and a
-- caller's temporary table could shadow outbox_events), and let only roles
-- granted it (sql/roles.sql) or the owner enqueue.
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION outbox_enqueue(text, text, jsonb, text, uuid, text, text) '
                   'SET search_path = %I, pg_temp', current_schema());
END
$$;
REVOKE ALL ON FUNCTION outbox_enqueue(text, text, jsonb, text, uuid, text, text) FROM PUBLIC;
