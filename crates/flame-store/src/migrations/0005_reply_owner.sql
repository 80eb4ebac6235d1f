-- Who is writing an open reply: the process's id, when that process started (so that a process
-- id the system has since given to another process is not taken for the writer), and when the
-- writer last saved the reply. An opening of the store closes only the open replies whose writer
-- is gone; before this, every opening closed them all, under writers still streaming. A reply
-- left open before this migration has no owner and counts as left by a stopped process.
ALTER TABLE messages ADD COLUMN owner_pid INTEGER;
ALTER TABLE messages ADD COLUMN owner_started INTEGER;
ALTER TABLE messages ADD COLUMN heartbeat_at INTEGER;
