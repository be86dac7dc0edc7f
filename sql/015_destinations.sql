-- Outbox Console schema, version 15: destinations of a routing dispatcher
-- (README, "Routing").
--
-- A dispatcher that delivers by a routes file claims only the events its
-- routes match, and of those only the ones whose destination (the first
-- matching route's) is neither paused here nor behind an open circuit.
-- Pausing a destination is an operator's action like pausing a namespace:
-- through a SECURITY DEFINER function that checks the caller's role and
-- writes the audit row; the claim statement reads this table
-- (store/claimstatement.cpp), so a paused destination's events stay pending
-- whichever dispatcher runs.

CREATE TABLE outbox_destination_pauses (
    destination text        PRIMARY KEY,
    reason      text        NOT NULL,
    paused_by   text        NOT NULL DEFAULT session_user,
    os_user     text,
    host        text,
    paused_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT outbox_destination_pauses_destination_check CHECK (btrim(destination) <> ''),
    CONSTRAINT outbox_destination_pauses_reason_check CHECK (btrim(reason) <> ''),
    -- Plain text, bounded, as the namespace pauses (sql/012_hardening.sql).
    CONSTRAINT outbox_destination_pauses_text_check
        CHECK (outbox_plain_text(destination, 200) AND outbox_plain_text(reason, 1000)
               AND outbox_plain_text(os_user, 128) AND outbox_plain_text(host, 255))
);

-- What each dispatcher delivers to, as it reports it (name, kind, target
-- without credentials, circuit state and its reason, rate, in flight, last
-- error; never a secret). NULL: a dispatcher with one runner URL.
ALTER TABLE outbox_dispatchers ADD COLUMN destinations jsonb;

-- Pausing a paused destination replaces the reason. Audited as a pause
-- whose filter names the destination.
CREATE FUNCTION outbox_destination_pause(p_destination text, p_reason text,
                                         p_os_user text DEFAULT NULL, p_host text DEFAULT NULL,
                                         p_application text DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
BEGIN
    IF p_destination IS NULL OR btrim(p_destination) = '' THEN
        RAISE EXCEPTION 'outbox_destination_pause: the destination must not be empty'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_reason IS NULL OR btrim(p_reason) = '' THEN
        RAISE EXCEPTION 'outbox_destination_pause: a reason is required'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Say why, e.g. ''billing endpoint down, INC-42''.';
    END IF;
    INSERT INTO outbox_destination_pauses AS p (destination, reason, os_user, host)
    VALUES (p_destination, p_reason, p_os_user, p_host)
    ON CONFLICT (destination) DO UPDATE
       SET reason = excluded.reason, paused_by = session_user, os_user = excluded.os_user,
           host = excluded.host, paused_at = now();
    INSERT INTO outbox_audit (db_user, os_user, host, application, action, filter, affected,
                              finished_at)
    VALUES (session_user, p_os_user, p_host, p_application, 'pause',
            format('destination=%s reason=%s', p_destination, p_reason), 1, now());
END
$$;

-- Returns whether the destination was paused (false: nothing happened and
-- nothing is audited). Wakes the dispatchers.
CREATE FUNCTION outbox_destination_resume(p_destination text, p_os_user text DEFAULT NULL,
                                          p_host text DEFAULT NULL,
                                          p_application text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
BEGIN
    DELETE FROM outbox_destination_pauses WHERE destination = p_destination;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO outbox_audit (db_user, os_user, host, application, action, filter, affected,
                              finished_at)
    VALUES (session_user, p_os_user, p_host, p_application, 'resume',
            format('destination=%s', p_destination), 1, now());
    PERFORM pg_notify('outbox_events', '');
    RETURN true;
END
$$;

-- A dispatcher reports its destinations with the secret of its registry row.
CREATE FUNCTION outbox_dispatcher_destinations(p_worker_id uuid, p_token text,
                                               p_destinations jsonb)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
AS $$
BEGIN
    UPDATE outbox_dispatchers SET destinations = p_destinations
     WHERE worker_id = p_worker_id AND token_sha256 = sha256(convert_to(p_token, 'UTF8'));
    RETURN FOUND;
END
$$;

DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'outbox_destination_pause(text, text, text, text, text)',
        'outbox_destination_resume(text, text, text, text)',
        'outbox_dispatcher_destinations(uuid, text, jsonb)']
    LOOP
        -- pg_catalog first, as every definer function (sql/012_hardening.sql).
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f,
                       current_schema());
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
END
$$;
