-- Outbox Console schema, version 3: who is delivering (the dispatcher
-- registry), pausing delivery per namespace or topic, and retention.
--
-- Every write goes through a SECURITY DEFINER function, so the database, not
-- the client, decides who may change what and writes the audit row
-- (docs/DECISIONS.md, "Registry, pauses and retention in the database").

-- One row per running dispatcher, written by itself. A row whose heartbeat is
-- older than three heartbeat intervals belongs to a dispatcher that is gone
-- (killed, host lost); a graceful stop deletes its row.
CREATE TABLE outbox_dispatchers (
    worker_id          uuid        PRIMARY KEY,
    host               text        NOT NULL,
    pid                bigint      NOT NULL,
    version            text        NOT NULL,
    application        text        NOT NULL,
    db_user            text        NOT NULL DEFAULT session_user,
    namespace          text,                  -- NULL: every namespace
    runner_url         text        NOT NULL,  -- without user info
    concurrency        integer     NOT NULL,
    heartbeat_interval interval    NOT NULL,
    started_at         timestamptz NOT NULL,
    registered_at      timestamptz NOT NULL DEFAULT now(),
    heartbeat_at       timestamptz NOT NULL DEFAULT now(),
    state              text        NOT NULL DEFAULT 'running',
    in_flight          integer     NOT NULL DEFAULT 0,
    delivered_per_s    double precision NOT NULL DEFAULT 0,
    failed_per_s       double precision NOT NULL DEFAULT 0,
    delivered_total    bigint      NOT NULL DEFAULT 0,
    -- sha256 of the secret the dispatcher chose at registration; only who
    -- knows the secret may heartbeat or delete the row. A hash of 32 random
    -- bytes gives nothing away, so the row stays readable by everybody.
    token_sha256       bytea       NOT NULL
);

-- Whether a registry row's dispatcher is alive now.
CREATE FUNCTION outbox_dispatcher_alive(p_heartbeat_at timestamptz, p_interval interval)
RETURNS boolean
LANGUAGE sql STABLE
AS $$ SELECT p_heartbeat_at > now() - 3 * p_interval $$;

CREATE FUNCTION outbox_dispatcher_register(p_worker_id uuid, p_token text, p_host text,
                                           p_pid bigint, p_version text, p_application text,
                                           p_namespace text, p_runner_url text,
                                           p_concurrency integer, p_heartbeat_ms bigint,
                                           p_started_at timestamptz)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_hash bytea := sha256(convert_to(p_token, 'UTF8'));
BEGIN
    IF p_token IS NULL OR length(p_token) < 32 THEN
        RAISE EXCEPTION 'outbox_dispatcher_register: the token must be a secret of at least 32 characters'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_heartbeat_ms IS NULL OR p_heartbeat_ms < 100 THEN
        RAISE EXCEPTION 'outbox_dispatcher_register: heartbeat interval % ms is too short', p_heartbeat_ms
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Heartbeat at most every 100 ms.';
    END IF;
    -- Rows of dispatchers gone for a day are history nobody reads.
    DELETE FROM outbox_dispatchers WHERE heartbeat_at < now() - interval '1 day';
    INSERT INTO outbox_dispatchers AS d
           (worker_id, host, pid, version, application, namespace, runner_url, concurrency,
            heartbeat_interval, started_at, token_sha256)
    VALUES (p_worker_id, p_host, p_pid, p_version, p_application, nullif(p_namespace, ''),
            p_runner_url, p_concurrency, p_heartbeat_ms * interval '1 millisecond',
            p_started_at, v_hash)
    ON CONFLICT (worker_id) DO UPDATE
       SET host = excluded.host, pid = excluded.pid, version = excluded.version,
           application = excluded.application, db_user = session_user,
           namespace = excluded.namespace, runner_url = excluded.runner_url,
           concurrency = excluded.concurrency, heartbeat_interval = excluded.heartbeat_interval,
           started_at = excluded.started_at, registered_at = now(), heartbeat_at = now(),
           state = 'running', in_flight = 0, delivered_per_s = 0, failed_per_s = 0,
           delivered_total = 0, token_sha256 = excluded.token_sha256
     -- A fixed worker id may take over the row of its own earlier run once
     -- that run is gone; a live row stays with whoever holds its secret.
     WHERE d.token_sha256 = excluded.token_sha256
        OR NOT outbox_dispatcher_alive(d.heartbeat_at, d.heartbeat_interval);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'outbox_dispatcher_register: worker id % is in use by a running dispatcher', p_worker_id
            USING ERRCODE = 'unique_violation',
                  HINT = 'Give every dispatcher its own --worker-id (or none: one is generated).';
    END IF;
END
$$;

-- False when the row is gone (deleted after a day of silence, or never
-- written): the caller registers again.
CREATE FUNCTION outbox_dispatcher_heartbeat(p_worker_id uuid, p_token text, p_state text,
                                            p_in_flight integer, p_delivered_per_s double precision,
                                            p_failed_per_s double precision,
                                            p_delivered_total bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
BEGIN
    UPDATE outbox_dispatchers
       SET heartbeat_at = now(), state = p_state, in_flight = p_in_flight,
           delivered_per_s = p_delivered_per_s, failed_per_s = p_failed_per_s,
           delivered_total = p_delivered_total
     WHERE worker_id = p_worker_id AND token_sha256 = sha256(convert_to(p_token, 'UTF8'));
    RETURN FOUND;
END
$$;

CREATE FUNCTION outbox_dispatcher_unregister(p_worker_id uuid, p_token text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
BEGIN
    DELETE FROM outbox_dispatchers
     WHERE worker_id = p_worker_id AND token_sha256 = sha256(convert_to(p_token, 'UTF8'));
    RETURN FOUND;
END
$$;

-- What is paused. topic NULL pauses the whole namespace. Dispatchers do not
-- claim matching events (the claim statement tests NOT EXISTS here); events
-- stay pending.
CREATE TABLE outbox_pauses (
    id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace text        NOT NULL,
    topic     text,
    reason    text        NOT NULL,
    paused_by text        NOT NULL DEFAULT session_user,
    os_user   text,
    host      text,
    paused_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT outbox_pauses_namespace_check CHECK (btrim(namespace) <> ''),
    CONSTRAINT outbox_pauses_topic_check CHECK (topic IS NULL OR btrim(topic) <> ''),
    CONSTRAINT outbox_pauses_reason_check CHECK (btrim(reason) <> '')
);
CREATE UNIQUE INDEX outbox_pauses_scope_idx ON outbox_pauses (namespace, coalesce(topic, ''));

-- The audit names pauses, resumes and the retention's deletions as well.
ALTER TABLE outbox_audit DROP CONSTRAINT outbox_audit_action_check;
ALTER TABLE outbox_audit ADD CONSTRAINT outbox_audit_action_check
    CHECK (action IN ('retry', 'requeue', 'cancel', 'purge', 'replay', 'pause', 'resume',
                      'retention'));

-- Pauses one namespace (p_topic NULL) or one topic of it. Pausing what is
-- already paused replaces the reason. Returns the pause's id.
CREATE FUNCTION outbox_pause(p_namespace text, p_topic text, p_reason text,
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
    RETURN v_id;
END
$$;

-- Resumes one topic, or with p_topic NULL the namespace and every topic
-- paused in it. Wakes the dispatchers. Returns how many pauses ended (0:
-- nothing was paused there, and nothing is audited).
CREATE FUNCTION outbox_resume(p_namespace text, p_topic text,
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
    RETURN v_count;
END
$$;

-- Retention: deletes at most p_batch delivered (or dead) events created
-- before now() - p_older_than_ms, oldest first, in one short transaction,
-- and audits it as the system's action (application 'retention'). Returns
-- how many it deleted; the caller repeats while a full batch comes back.
CREATE FUNCTION outbox_retention_delete(p_status text, p_older_than_ms bigint, p_batch integer,
                                        p_host text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_count bigint;
BEGIN
    IF p_status NOT IN ('delivered', 'dead') THEN
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
    -- The partial indexes on (created_at, id) per terminal status make this
    -- a walk from the oldest row; SKIP LOCKED stays out of an operator's way.
    DELETE FROM outbox_events
     WHERE id = ANY (ARRAY(
           SELECT id FROM outbox_events
            WHERE status = p_status
              AND created_at < now() - p_older_than_ms * interval '1 millisecond'
            ORDER BY created_at, id
            LIMIT p_batch
              FOR UPDATE SKIP LOCKED))
       AND status = p_status;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    IF v_count > 0 THEN
        INSERT INTO outbox_audit (db_user, os_user, host, application, action, filter, affected,
                                  finished_at)
        VALUES (session_user, NULL, p_host, 'retention', 'retention',
                format('status=%s created_before=now-%sms', p_status, p_older_than_ms),
                v_count, now());
    END IF;
    RETURN v_count;
END
$$;

-- As for outbox_enqueue in 001: pin the search path, let only the roles
-- granted them (sql/roles.sql) or the owner call the functions.
DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'outbox_dispatcher_register(uuid, text, text, bigint, text, text, text, text, integer, bigint, timestamptz)',
        'outbox_dispatcher_heartbeat(uuid, text, text, integer, double precision, double precision, bigint)',
        'outbox_dispatcher_unregister(uuid, text)',
        'outbox_pause(text, text, text, text, text, text)',
        'outbox_resume(text, text, text, text, text)',
        'outbox_retention_delete(text, bigint, integer, text)']
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp', f, current_schema());
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
END
$$;
