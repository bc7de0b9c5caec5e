-- JSON text as jsonb can hold it. jsonb cannot hold the character U+0000, which JSON writes as the
-- escape \u0000: each such escape becomes \ufffd (U+FFFD, the replacement character), so the text
-- is stored instead of refused. An escape is one only when an even number of backslashes comes
-- before it (`\\u0000` is a backslash and "u0000": six characters of text, kept as they are).
-- Text without the six characters is returned as it is, without running the expression.
-- The E'' strings read the same whatever `standard_conforming_strings` is.
CREATE FUNCTION adk_jsonb_text(json text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE
        WHEN strpos(json, E'\\u0000') = 0 THEN json
        ELSE regexp_replace(json, E'(?<!\\\\)((?:\\\\\\\\)*)\\\\u0000', E'\\1\\\\ufffd', 'g')
    END
$$;

-- The JSON text of an event when its jsonb copy may differ from it (it holds the six characters
-- \u0000: U+0000, or text that shows them), else NULL: adk-rs reads this text when it is there,
-- so such an event reads back exactly.
CREATE FUNCTION adk_exact_json(json text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT CASE WHEN strpos(json, E'\\u0000') > 0 THEN json END
$$;
