-- A reply still streaming from a model is stored as it arrives, with open = 1; it gets its event,
-- its counts and its log entry when it is finished. A crash leaves open = 1, and the next start
-- finishes it as interrupted, keeping what arrived.
ALTER TABLE messages ADD COLUMN open INTEGER NOT NULL DEFAULT 0 CHECK (open IN (0, 1));
