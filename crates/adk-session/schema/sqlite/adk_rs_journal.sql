-- Version 2 of adk-rs's additions: the effect journal, beside ADK Python's tables (which it does
-- not change). A row is written before a tool with side effects runs; `result_event_id` is set in
-- the transaction that stores the event answering the call. Runs last in every plan.

CREATE TABLE IF NOT EXISTS adk_tool_journal (
    app_name         TEXT    NOT NULL,
    user_id          TEXT    NOT NULL,
    session_id       TEXT    NOT NULL,
    function_call_id TEXT    NOT NULL,
    invocation_id    TEXT    NOT NULL,
    tool_name        TEXT    NOT NULL,
    args_hash        TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    result_event_id  TEXT,
    PRIMARY KEY (app_name, user_id, session_id, function_call_id),
    FOREIGN KEY (app_name, user_id, session_id)
        REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE
);

CREATE INDEX IF NOT EXISTS adk_tool_journal_by_invocation
    ON adk_tool_journal (app_name, user_id, session_id, invocation_id);

UPDATE adk_internal_metadata SET value = '2' WHERE "key" = 'adk_rs_schema_version';
