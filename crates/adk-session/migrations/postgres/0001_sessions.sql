-- Sessions, their events and the shared state scopes, named like ADK's DatabaseSessionService.
-- State columns hold JSON objects with unprefixed keys; `events.event_data` holds the event's wire
-- JSON as written (text, so that it round-trips byte for byte). `revision` counts the appends a
-- session has had: a writer must name the revision it saw.

CREATE TABLE sessions (
    app_name    TEXT             NOT NULL,
    user_id     TEXT             NOT NULL,
    id          TEXT             NOT NULL,
    state       JSONB            NOT NULL DEFAULT '{}',
    revision    BIGINT           NOT NULL DEFAULT 0,
    create_time DOUBLE PRECISION NOT NULL,
    update_time DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (app_name, user_id, id)
);

CREATE TABLE events (
    app_name      TEXT             NOT NULL,
    user_id       TEXT             NOT NULL,
    session_id    TEXT             NOT NULL,
    -- The session revision this event created: its position in the session, from 1.
    seq           BIGINT           NOT NULL,
    id            TEXT             NOT NULL,
    invocation_id TEXT             NOT NULL,
    author        TEXT             NOT NULL,
    timestamp     DOUBLE PRECISION NOT NULL,
    event_data    TEXT             NOT NULL,
    PRIMARY KEY (app_name, user_id, session_id, seq),
    FOREIGN KEY (app_name, user_id, session_id)
        REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE
);

CREATE INDEX events_by_timestamp ON events (app_name, user_id, session_id, timestamp);

CREATE TABLE app_states (
    app_name    TEXT             NOT NULL PRIMARY KEY,
    state       JSONB            NOT NULL,
    update_time DOUBLE PRECISION NOT NULL
);

CREATE TABLE user_states (
    app_name    TEXT             NOT NULL,
    user_id     TEXT             NOT NULL,
    state       JSONB            NOT NULL,
    update_time DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (app_name, user_id)
);
