import PostgresNIO

/// The tables of a cluster in its PostgreSQL (schema `canopy`), created by the first node that
/// starts; every statement is idempotent, and nodes starting together take turns (an advisory
/// lock held for the creating transaction).
enum ClusterSchema {
    /// The first key of every advisory lock Canopy takes ("Cano"); the second is a node's id, or
    /// 0 for the schema's creation.
    static let lockClass: Int32 = 0x4361_6E6F

    static let statements: [PostgresQuery] = [
        "CREATE SCHEMA IF NOT EXISTS canopy",
        """
        CREATE TABLE IF NOT EXISTS canopy.nodes (
            id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            advertise text NOT NULL UNIQUE,
            version text NOT NULL,
            started_at timestamptz NOT NULL DEFAULT now(),
            lease_until timestamptz NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS canopy.namespaces (
            name text PRIMARY KEY,
            epoch bigint NOT NULL DEFAULT 0,
            leader integer REFERENCES canopy.nodes (id) ON DELETE SET NULL,
            checkpoint_seq bigint NOT NULL DEFAULT 0,
            checkpoint_at timestamptz)
        """,
        """
        CREATE TABLE IF NOT EXISTS canopy.log (
            namespace text NOT NULL REFERENCES canopy.namespaces (name),
            seq bigint NOT NULL,
            epoch bigint NOT NULL,
            record bytea NOT NULL,
            PRIMARY KEY (namespace, seq))
        """,
        """
        CREATE TABLE IF NOT EXISTS canopy.checkpoints (
            namespace text NOT NULL REFERENCES canopy.namespaces (name),
            seq bigint NOT NULL,
            part integer NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (namespace, seq, part))
        """,
        """
        CREATE TABLE IF NOT EXISTS canopy.rules (
            namespace text PRIMARY KEY REFERENCES canopy.namespaces (name),
            rules text NOT NULL,
            epoch bigint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE IF NOT EXISTS canopy.on_disconnect (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            namespace text NOT NULL REFERENCES canopy.namespaces (name),
            node integer NOT NULL,
            session text NOT NULL,
            write bytea NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS on_disconnect_by_node ON canopy.on_disconnect (namespace, node)",
        // The secret nodes present to each other (forwarded writes): random, made once.
        """
        CREATE TABLE IF NOT EXISTS canopy.secret (
            one boolean PRIMARY KEY DEFAULT true CHECK (one),
            secret text NOT NULL)
        """,
        """
        INSERT INTO canopy.secret (secret)
        SELECT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
        ON CONFLICT DO NOTHING
        """,
        // What each follower applied of each namespace's log, as it last reported.
        """
        CREATE TABLE IF NOT EXISTS canopy.replicas (
            namespace text NOT NULL REFERENCES canopy.namespaces (name),
            node integer NOT NULL,
            applied bigint NOT NULL,
            reported_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (namespace, node))
        """,
        // A node is alive while its lease runs (judged by PostgreSQL's clock alone) and its
        // session holds its advisory lock (which frees the moment its process dies). Advisory
        // locks belong to a database: a node's is looked up in this one.
        """
        CREATE OR REPLACE FUNCTION canopy.node_alive(node integer) RETURNS boolean LANGUAGE sql STABLE AS $$
            SELECT EXISTS (SELECT 1 FROM canopy.nodes n WHERE n.id = node AND n.lease_until > now())
               AND EXISTS (SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                           WHERE d.datname = current_database() AND l.locktype = 'advisory'
                             AND l.classid = 1130458735 AND l.objid = node AND l.objsubid = 2 AND l.granted)
        $$
        """,
    ]
}
