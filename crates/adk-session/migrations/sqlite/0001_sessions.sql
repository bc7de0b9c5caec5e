-- Sessions, their events and the shared state scopes, named like ADK's DatabaseSessionService.
-- State columns hold JSON objects with unprefixed keys; `events.event_data` holds the event's wire
-- JSON. `revision` counts the appends a session has had: a writer must name the revision it saw.

CREATE TABLE sessions (
    app_name    TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    state       TEXT    NOT NULL DEFAULT '{}',
    revision    INTEGER NOT NULL DEFAULT 0,
    create_time REAL    NOT NULL,
    update_time REAL    NOT NULL,
    PRIMARY KEY (app_name, user_id, id)
);

CREATE TABLE events (
    app_name      TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    session_id    TEXT    NOT NULL,
    -- The session revision this event created: its position in the session, from 1.
    seq           INTEGER NOT NULL,
    id            TEXT    NOT NULL,
    invocation_id TEXT    NOT NULL,
    author        TEXT    NOT NULL,
    timestamp     REAL    NOT NULL,
    event_data    TEXT    NOT NULL,
    PRIMARY KEY (app_name, user_id, session_id, seq),
    FOREIGN KEY (app_name, user_id, session_id)
        REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE
);

CREATE INDEX events_by_timestamp ON events (app_name, user_id, session_id, timestamp);

CREATE TABLE app_states (
    app_name    TEXT NOT NULL PRIMARY KEY,
    state       TEXT NOT NULL,
    update_time REAL NOT NULL
);

CREATE TABLE user_states (
    app_name    TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    state       TEXT NOT NULL,
    update_time REAL NOT NULL,
    PRIMARY KEY (app_name, user_id)
);

-- Long-term memory: one row per remembered event, searched through FTS5 on `text`.
CREATE VIRTUAL TABLE memories USING fts5(
    text,
    app_name UNINDEXED,
    user_id UNINDEXED,
    session_id UNINDEXED,
    author UNINDEXED,
    timestamp UNINDEXED,
    content UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 0'
);
