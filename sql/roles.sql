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
GRANT EXECUTE ON FUNCTION outbox_enqueue(text, text, jsonb, text, uuid, text, text, integer, text, text)
    TO outbox_producer;
GRANT SELECT ON outbox_schema_version TO outbox_producer;

-- Dispatchers: claim, ack, nack and sweep (UPDATE of the delivery columns,
-- within what row-level security allows, 012_hardening.sql), append
-- failure history with a nack. No INSERT or DELETE of events.
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
    outbox_dispatcher_unregister(uuid, text)
    TO outbox_dispatcher, outbox_operator;
-- Retention is the dispatchers' housekeeping (012_hardening.sql); operators
-- purge through outbox_op_purge. Earlier versions of this file granted it to
-- operators as well.
GRANT EXECUTE ON FUNCTION outbox_retention_delete(text, bigint, integer, text) TO outbox_dispatcher;
REVOKE EXECUTE ON FUNCTION outbox_retention_delete(text, bigint, integer, text) FROM outbox_operator;
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

-- Destinations of routing dispatchers (015_destinations.sql): dispatchers
-- read the pauses in their claim and report their destinations, operators
-- pause and resume them (the functions write the audit row), everybody reads.
GRANT SELECT ON outbox_destination_pauses TO outbox_dispatcher, outbox_operator, outbox_viewer;
GRANT EXECUTE ON FUNCTION outbox_dispatcher_destinations(uuid, text, jsonb)
    TO outbox_dispatcher, outbox_operator;
GRANT EXECUTE ON FUNCTION outbox_destination_pause(text, text, text, text, text),
                          outbox_destination_resume(text, text, text, text)
    TO outbox_operator;

-- The limits the owner sets (012_hardening.sql): everybody may read them.
GRANT SELECT ON outbox_limits
    TO outbox_producer, outbox_dispatcher, outbox_operator, outbox_viewer;

-- Server-side limits per login (docs/SECURITY.md, "Limits per login").
-- PostgreSQL applies role settings and connection limits of the login
-- itself, never those of a group it belongs to; so they are set here on
-- every login that is a member of outbox_dispatcher, outbox_operator or
-- outbox_viewer, for this database: run `outboxctl migrate --with-roles`
-- again after granting one of them to a new login. A setting or connection
-- limit the login has already (for this database or for all) is kept:
-- change one with
--     ALTER ROLE alice IN DATABASE app SET statement_timeout = '10min';
--     ALTER ROLE alice CONNECTION LIMIT 40;
-- Not touched: superusers, the outbox's owner, the role running this, and
-- members of outbox_producer (a producer is the application's own login,
-- whose statements are not the outbox's to limit).
DO $$
DECLARE
    v_owner oid := (SELECT relowner FROM pg_class WHERE oid = 'outbox_events'::regclass);
    v_database oid := (SELECT oid FROM pg_database WHERE datname = current_database());
    v_login record;
    v_setting record;
BEGIN
    FOR v_login IN
        SELECT r.oid, r.rolname, r.rolconnlimit,
               CASE WHEN pg_has_role(r.oid, 'outbox_dispatcher', 'MEMBER') THEN 'dispatcher'
                    WHEN pg_has_role(r.oid, 'outbox_operator', 'MEMBER') THEN 'operator'
                    ELSE 'viewer' END AS kind
          FROM pg_roles r
         WHERE r.rolcanlogin AND NOT r.rolsuper
           AND r.oid <> v_owner AND r.rolname <> current_user
           AND NOT pg_has_role(r.oid, 'outbox_producer', 'MEMBER')
           AND (pg_has_role(r.oid, 'outbox_dispatcher', 'MEMBER')
                OR pg_has_role(r.oid, 'outbox_operator', 'MEMBER')
                OR pg_has_role(r.oid, 'outbox_viewer', 'MEMBER'))
         ORDER BY r.rolname
    LOOP
        -- Dispatchers' statements are short (the dispatcher sets 60 s for
        -- its own); an operator's preview counts over the whole outbox.
        -- Nobody needs to sit in an open transaction: that holds back the
        -- vacuum of the outbox for everybody.
        FOR v_setting IN
            SELECT * FROM (VALUES
                ('statement_timeout',
                 CASE v_login.kind WHEN 'operator' THEN '5min' ELSE '1min' END),
                ('idle_in_transaction_session_timeout', '1min')) AS s(name, value)
        LOOP
            CONTINUE WHEN EXISTS (
                SELECT FROM pg_db_role_setting d, unnest(d.setconfig) c
                 WHERE d.setrole = v_login.oid AND d.setdatabase IN (0, v_database)
                   AND c LIKE v_setting.name || '=%');
            EXECUTE format('ALTER ROLE %I IN DATABASE %I SET %s = %L', v_login.rolname,
                           current_database(), v_setting.name, v_setting.value);
        END LOOP;
        -- Cluster-wide: all dispatchers usually share one login, each with
        -- up to five connections; a console holds up to 13 (two consoles
        -- under one login, with room).
        IF v_login.rolconnlimit = -1 THEN
            EXECUTE format('ALTER ROLE %I CONNECTION LIMIT %s', v_login.rolname,
                           CASE v_login.kind WHEN 'dispatcher' THEN 100 ELSE 30 END);
        END IF;
    END LOOP;
END
$$;
