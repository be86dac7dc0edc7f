-- Least-privilege group roles (NOLOGIN). Grant them to login roles:
--     GRANT outbox_dispatcher TO dispatcher_login;
-- Applied by `outboxctl migrate --with-roles`; safe to apply again.
-- Roles are cluster-wide, grants are per database: apply it in each database
-- that holds an outbox.

DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['outbox_producer', 'outbox_dispatcher', 'outbox_operator', 'outbox_viewer']
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL; -- created meanwhile by a migration of another database (roles are cluster-wide)
            END;
        END IF;
    END LOOP;
END
$$;

DO $$
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO outbox_producer, outbox_dispatcher, outbox_operator, outbox_viewer',
                   (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.oid = 'outbox_events'::regclass));
END
$$;

-- Producers: enqueue only, through the SECURITY DEFINER function; they may
-- read the schema version so that `outboxctl enqueue` can check it.
GRANT EXECUTE ON FUNCTION outbox_enqueue(text, text, jsonb, text, uuid, text, text) TO outbox_producer;
GRANT SELECT ON outbox_schema_version TO outbox_producer;

-- Dispatchers: claim, ack, nack and sweep (UPDATE of the delivery columns),
-- append failure history. No INSERT or DELETE of events.
GRANT SELECT ON outbox_events, outbox_schema_version TO outbox_dispatcher;
GRANT UPDATE (status, attempts, next_attempt_at, locked_by, locked_until, last_error,
              delivered_at, updated_at) ON outbox_events TO outbox_dispatcher;
GRANT INSERT ON outbox_attempts TO outbox_dispatcher;

-- Operators: read everything; change events only through the outbox_op_*
-- functions (sql/002_operator_rules.sql), which enforce the states each
-- action may touch and write the audit trail themselves. No direct writes:
-- revoked explicitly, since earlier versions of this file granted them.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE
    ON outbox_events, outbox_attempts, outbox_audit, outbox_audit_events
  FROM outbox_operator;
REVOKE EXECUTE ON FUNCTION outbox_uuid_v7() FROM outbox_operator;
GRANT SELECT ON outbox_events, outbox_attempts, outbox_audit, outbox_audit_events,
                outbox_schema_version TO outbox_operator;
GRANT EXECUTE ON FUNCTION
    outbox_op_begin(text, text, text, text, text, bigint),
    outbox_op_finish(bigint),
    outbox_op_retry(bigint, uuid[], timestamptz, bigint),
    outbox_op_requeue(bigint, uuid[], timestamptz, bigint),
    outbox_op_cancel(bigint, uuid[], timestamptz, bigint, text),
    outbox_op_purge(bigint, uuid[], timestamptz, bigint),
    outbox_op_replay(bigint, uuid[], timestamptz, bigint, boolean)
  TO outbox_operator;

-- Viewers: read everything, change nothing.
GRANT SELECT ON outbox_events, outbox_attempts, outbox_audit, outbox_audit_events,
                outbox_schema_version TO outbox_viewer;

-- Dispatcher registry, pauses and retention (003_registry_pause.sql). Every
-- change goes through a SECURITY DEFINER function: a dispatcher writes only
-- the registry row whose secret it holds, operators pause and resume (the
-- function writes the audit row), everybody reads.
GRANT SELECT ON outbox_dispatchers, outbox_pauses
    TO outbox_dispatcher, outbox_operator, outbox_viewer;
GRANT EXECUTE ON FUNCTION
    outbox_dispatcher_register(uuid, text, text, bigint, text, text, text, text, integer, bigint, timestamptz),
    outbox_dispatcher_heartbeat(uuid, text, text, integer, double precision, double precision, bigint),
    outbox_dispatcher_unregister(uuid, text),
    outbox_retention_delete(text, bigint, integer, text)
    TO outbox_dispatcher, outbox_operator;
GRANT EXECUTE ON FUNCTION outbox_pause(text, text, text, text, text, text),
                          outbox_resume(text, text, text, text, text)
    TO outbox_operator;
-- Holding and releasing the events of a paused or resumed scope
-- (010_paused_backlog.sql): the client that paused or resumed works it off,
-- dispatchers finish what it left. The step only makes `held` agree with
-- outbox_pauses; it cannot pause or resume anything.
GRANT SELECT ON outbox_pause_work TO outbox_dispatcher, outbox_operator, outbox_viewer;
GRANT EXECUTE ON FUNCTION outbox_pause_continue(text, text, integer)
    TO outbox_dispatcher, outbox_operator;

-- Throughput and backlog history (006_throughput_history.sql): dispatchers
-- write it through the functions, everybody reads it.
GRANT SELECT ON outbox_throughput_history, outbox_backlog_history
    TO outbox_dispatcher, outbox_operator, outbox_viewer;
GRANT EXECUTE ON FUNCTION
    outbox_history_record(uuid, text, bigint, bigint, bigint),
    outbox_history_backlog(uuid, text, bigint, bigint, bigint, bigint, double precision)
    TO outbox_dispatcher;
