-- The last revision of each deleted session. A session re-created with the same id starts after it,
-- so that a writer still holding a revision of the deleted session can never match the new one.

CREATE TABLE deleted_sessions (
    app_name TEXT   NOT NULL,
    user_id  TEXT   NOT NULL,
    id       TEXT   NOT NULL,
    revision BIGINT NOT NULL,
    PRIMARY KEY (app_name, user_id, id)
);
