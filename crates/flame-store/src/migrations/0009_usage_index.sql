-- Each reply's usage counts, by frame and model: what frame costs add up
-- (`Store::usage_by_frame_and_model`). The counts are read out of the usage JSON once, when a
-- reply is written, rather than from every reply each time a tree's costs are shown: the query
-- names the same expressions, so SQLite reads them from this index and neither parses the JSON
-- nor reads the message rows. Only replies (`assistant` messages) record usage, so only they
-- are indexed; `role` is in the index so that it covers the query. The shapes earlier versions
-- stored (Anthropic's names for the cache counts) are read too. Usage that is not JSON counts
-- nothing, a count that is not a whole number is 0, and one above 2^32 (more than any provider
-- reports) is 2^32, so no sum overflows.
CREATE INDEX messages_usage ON messages (
    frame_id,
    model,
    min(max(coalesce(CAST(json_extract(CASE WHEN json_valid(usage) THEN usage END,
        '$.input_tokens') AS INTEGER), 0), 0), 4294967296),
    min(max(coalesce(CAST(json_extract(CASE WHEN json_valid(usage) THEN usage END,
        '$.output_tokens') AS INTEGER), 0), 0), 4294967296),
    min(max(coalesce(CAST(coalesce(
        json_extract(CASE WHEN json_valid(usage) THEN usage END, '$.cache_read_tokens'),
        json_extract(CASE WHEN json_valid(usage) THEN usage END, '$.cache_read_input_tokens'))
        AS INTEGER), 0), 0), 4294967296),
    min(max(coalesce(CAST(coalesce(
        json_extract(CASE WHEN json_valid(usage) THEN usage END, '$.cache_write_tokens'),
        json_extract(CASE WHEN json_valid(usage) THEN usage END, '$.cache_creation_input_tokens'))
        AS INTEGER), 0), 0), 4294967296),
    role
) WHERE role = 'assistant';
