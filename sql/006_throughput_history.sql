-- Outbox Console schema, version 6: a short history of throughput and
-- backlog, written by the dispatchers, so that a console shows the last hour
-- of any database however many rows outbox_events holds and wherever its
-- dispatchers run (docs/DECISIONS.md, "Charts for any database").
--
-- Every dispatcher adds what it delivered since its previous heartbeat to
-- its own row of the current minute (one row per minute and dispatcher: many
-- dispatchers never wait for each other's row lock). Once a minute the
-- first dispatcher to get there records the backlog; the same writer prunes
-- what is older than two days, a bounded batch at a time. Writes go through
-- SECURITY DEFINER functions granted to outbox_dispatcher (sql/roles.sql);
-- the console reads the tables.

CREATE TABLE outbox_throughput_history (
    minute    timestamptz NOT NULL, -- date_trunc('minute', now()) of the server
    worker_id uuid        NOT NULL,
    delivered bigint      NOT NULL DEFAULT 0 CHECK (delivered >= 0),
    failed    bigint      NOT NULL DEFAULT 0 CHECK (failed >= 0), -- attempts that failed (retried or dead)
    dead      bigint      NOT NULL DEFAULT 0 CHECK (dead >= 0),   -- of those, the ones that made the event dead
    PRIMARY KEY (minute, worker_id)
);

CREATE TABLE outbox_backlog_history (
    minute           timestamptz      PRIMARY KEY,
    pending          bigint           NOT NULL, -- including retrying
    processing       bigint           NOT NULL,
    dead             bigint           NOT NULL,
    due_now          bigint           NOT NULL, -- pending, due, not paused
    oldest_due_age_s double precision NOT NULL, -- 0 when nothing is due
    recorded_by      uuid             NOT NULL
);

-- Only a registered dispatcher (holding its registry secret) writes, and only
-- its own row.
CREATE FUNCTION outbox_history_registered(p_worker_id uuid, p_token text)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (SELECT 1 FROM outbox_dispatchers
                    WHERE worker_id = p_worker_id
                      AND token_sha256 = sha256(convert_to(p_token, 'UTF8')))
$$;

-- Adds a dispatcher's counts since its previous call to the current minute.
-- Returns true when the current minute has no backlog sample yet: the
-- caller then reads the gauges and calls outbox_history_backlog.
CREATE FUNCTION outbox_history_record(p_worker_id uuid, p_token text, p_delivered bigint,
                                      p_failed bigint, p_dead bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_minute timestamptz := date_trunc('minute', now());
BEGIN
    IF p_delivered < 0 OR p_failed < 0 OR p_dead < 0 THEN
        RAISE EXCEPTION 'outbox_history_record: counts must not be negative'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT outbox_history_registered(p_worker_id, p_token) THEN
        RAISE EXCEPTION 'outbox_history_record: worker % is not registered with this secret', p_worker_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO outbox_throughput_history AS h (minute, worker_id, delivered, failed, dead)
    VALUES (v_minute, p_worker_id, p_delivered, p_failed, p_dead)
    ON CONFLICT (minute, worker_id) DO UPDATE
       SET delivered = h.delivered + excluded.delivered,
           failed = h.failed + excluded.failed,
           dead = h.dead + excluded.dead;
    RETURN NOT EXISTS (SELECT 1 FROM outbox_backlog_history WHERE minute = v_minute);
END
$$;

-- Records the backlog of the current minute unless another dispatcher did
-- already, and then (only the one that recorded it) prunes history older
-- than two days, at most 1000 rows of each table per call. Returns whether
-- this call recorded the sample.
CREATE FUNCTION outbox_history_backlog(p_worker_id uuid, p_token text, p_pending bigint,
                                       p_processing bigint, p_dead bigint, p_due_now bigint,
                                       p_oldest_due_age_s double precision)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
DECLARE
    v_keep_after timestamptz := now() - interval '2 days';
BEGIN
    IF NOT outbox_history_registered(p_worker_id, p_token) THEN
        RAISE EXCEPTION 'outbox_history_backlog: worker % is not registered with this secret', p_worker_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO outbox_backlog_history (minute, pending, processing, dead, due_now,
                                        oldest_due_age_s, recorded_by)
    VALUES (date_trunc('minute', now()), greatest(p_pending, 0), greatest(p_processing, 0),
            greatest(p_dead, 0), greatest(p_due_now, 0), greatest(p_oldest_due_age_s, 0),
            p_worker_id)
    ON CONFLICT (minute) DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- Both walks start at the oldest minute of the primary keys.
    DELETE FROM outbox_throughput_history
     WHERE (minute, worker_id) IN (SELECT minute, worker_id FROM outbox_throughput_history
                                    WHERE minute < v_keep_after ORDER BY minute LIMIT 1000);
    DELETE FROM outbox_backlog_history
     WHERE minute IN (SELECT minute FROM outbox_backlog_history
                       WHERE minute < v_keep_after ORDER BY minute LIMIT 1000);
    RETURN true;
END
$$;

-- As for the functions of 002 and 003: a pinned search path, and callable
-- only by the roles granted them (below and in sql/roles.sql) or the owner.
DO $$
DECLARE
    v_function regprocedure;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = current_schema()::regnamespace
           AND p.proname IN ('outbox_history_registered', 'outbox_history_record',
                             'outbox_history_backlog')
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_temp',
                       v_function, current_schema());
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_function);
    END LOOP;
END
$$;

-- Databases whose roles exist already get the grants now, so that upgrading
-- without --with-roles leaves the console's viewers able to read the history.
DO $$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY['outbox_dispatcher', 'outbox_operator', 'outbox_viewer'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = v_role);
        EXECUTE format('GRANT SELECT ON outbox_throughput_history, outbox_backlog_history TO %I',
                       v_role);
        IF v_role = 'outbox_dispatcher' THEN
            EXECUTE 'GRANT EXECUTE ON FUNCTION outbox_history_record(uuid, text, bigint, bigint,'
                    ' bigint), outbox_history_backlog(uuid, text, bigint, bigint, bigint, bigint,'
                    ' double precision) TO outbox_dispatcher';
        END IF;
    END LOOP;
END
$$;
