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

-- Producers: enqueue only, through the SECURITY DEFINER function.
GRANT EXECUTE ON FUNCTION outbox_enqueue(text, text, jsonb, text, uuid, text, text) TO outbox_producer;

-- Dispatchers: claim, ack, nack and sweep (UPDATE of the delivery columns),
-- append failure history. No INSERT or DELETE of events.
GRANT SELECT ON outbox_events, outbox_schema_version TO outbox_dispatcher;
GRANT UPDATE (status, attempts, next_attempt_at, locked_by, locked_until, last_error,
              delivered_at, updated_at) ON outbox_events TO outbox_dispatcher;
GRANT INSERT ON outbox_attempts TO outbox_dispatcher;

-- Operators: requeue, retry, cancel, purge, replay, audited.
GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_events TO outbox_operator;
GRANT SELECT, DELETE ON outbox_attempts TO outbox_operator;
GRANT SELECT, INSERT, UPDATE ON outbox_audit TO outbox_operator;
GRANT SELECT, INSERT ON outbox_audit_events TO outbox_operator;
GRANT SELECT ON outbox_schema_version TO outbox_operator;
GRANT EXECUTE ON FUNCTION outbox_uuid_v7() TO outbox_operator;

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
