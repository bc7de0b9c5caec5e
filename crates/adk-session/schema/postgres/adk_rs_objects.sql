-- adk-rs's own objects beside ADK Python's tables, and the version of this layout.

-- Events are read in the order they were appended.
CREATE UNIQUE INDEX adk_events_by_seq ON events (app_name, user_id, session_id, seq);

-- An event written without a position (by ADK Python) gets the next revision of its session,
-- so a writer of adk-rs holding an older revision fails as stale instead of overwriting it. The
-- function keeps the search path it was created with, so it finds these tables whatever the
-- writer's search path is.
CREATE FUNCTION adk_number_event() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
    UPDATE sessions SET revision = revision + 1
    WHERE app_name = NEW.app_name AND user_id = NEW.user_id AND id = NEW.session_id
    RETURNING revision INTO NEW.seq;
    RETURN NEW;
END
$$;

CREATE TRIGGER adk_number_events BEFORE INSERT ON events
FOR EACH ROW WHEN (NEW.seq IS NULL) EXECUTE FUNCTION adk_number_event();

-- The last revision of each deleted session. A session re-created with the same id starts after it,
-- so that a writer still holding a revision of the deleted session can never match the new one.
CREATE TABLE IF NOT EXISTS deleted_sessions (
    app_name TEXT   NOT NULL,
    user_id  TEXT   NOT NULL,
    id       TEXT   NOT NULL,
    revision BIGINT NOT NULL,
    PRIMARY KEY (app_name, user_id, id)
);

INSERT INTO adk_internal_metadata (key, value) VALUES ('adk_rs_schema_version', '2');
