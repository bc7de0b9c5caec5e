-- adk-rs's own objects beside ADK Python's tables, and the version of this layout.

-- Events are read in the order they were appended.
CREATE UNIQUE INDEX adk_events_by_seq ON events (app_name, user_id, session_id, seq);

-- An event written without a position (by ADK Python) gets the next revision of its session,
-- so a writer of adk-rs holding an older revision fails as stale instead of overwriting it.
CREATE TRIGGER adk_number_events AFTER INSERT ON events WHEN NEW.seq IS NULL
BEGIN
    UPDATE sessions SET revision = revision + 1
    WHERE app_name = NEW.app_name AND user_id = NEW.user_id AND id = NEW.session_id;
    UPDATE events SET seq = (
        SELECT revision FROM sessions
        WHERE app_name = NEW.app_name AND user_id = NEW.user_id AND id = NEW.session_id
    )
    WHERE rowid = NEW.rowid;
END;

-- The last revision of each deleted session. A session re-created with the same id starts after it,
-- so that a writer still holding a revision of the deleted session can never match the new one.
CREATE TABLE IF NOT EXISTS deleted_sessions (
    app_name TEXT    NOT NULL,
    user_id  TEXT    NOT NULL,
    id       TEXT    NOT NULL,
    revision INTEGER NOT NULL,
    PRIMARY KEY (app_name, user_id, id)
);

-- Long-term memory: one row per remembered event, searched through FTS5 on `text`.
CREATE VIRTUAL TABLE IF NOT EXISTS memories USING fts5(
    text,
    app_name UNINDEXED,
    user_id UNINDEXED,
    session_id UNINDEXED,
    author UNINDEXED,
    timestamp UNINDEXED,
    content UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 0'
);

INSERT INTO adk_internal_metadata ("key", value) VALUES ('adk_rs_schema_version', '1');
