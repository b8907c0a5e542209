// CanopyStorage: the on-disk side of a durable database (codec, journal, checkpoints, recovery).
