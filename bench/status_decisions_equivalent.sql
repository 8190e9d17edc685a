-- What `factreg status` computes on a registry with decisions, in SQLite: every current fact's status (the same
-- query as bench/status_equivalent.sql, kept in a temporary table), then the open decisions that need review —
-- a cited fact gone, refuted, superseded, stale, conditions_changed or unverifiable, or a newer version measured
-- under other identity conditions or outside the tolerance (the fact's, else 10%) of the value relied on.
CREATE TEMP TABLE st AS
WITH lv AS (
  SELECT r.fact_id, r.verdict, r.verified_at FROM verification r
  JOIN fact f ON r.fact_id = f.id AND r.fact_version = f.current_version
  WHERE r.pk = (SELECT max(pk) FROM verification r2 WHERE r2.fact_id = r.fact_id AND r2.fact_version = r.fact_version)
),
env AS MATERIALIZED (
  SELECT c.fact_id, m.value AS machine, c.key, c.value, v.measured_at
  FROM fact f
  JOIN fact_version v ON v.fact_id = f.id AND v.version = f.current_version
  JOIN condition c ON c.fact_id = f.id AND c.version = f.current_version
  JOIN condition m ON m.fact_id = f.id AND m.version = f.current_version AND m.key = 'machine'
  WHERE c.kind = 'identity' AND m.kind = 'identity' AND f.superseded_by IS NULL
    AND c.key IN ('build_commit', 'build', 'gpu_driver', 'driver_version')
),
newest AS MATERIALIZED (
  SELECT machine, key, value, measured_at FROM (
    SELECT machine, key, value, measured_at,
           row_number() OVER (PARTITION BY machine, key ORDER BY measured_at DESC) AS rn FROM env)
  WHERE rn = 1
),
inval AS MATERIALIZED (
  SELECT DISTINCT env.fact_id FROM env
  JOIN newest n ON n.machine = env.machine AND n.key = env.key AND n.value <> env.value
                AND n.measured_at > env.measured_at
)
SELECT f.id,
  CASE
    WHEN f.superseded_by IS NOT NULL THEN 'superseded'
    WHEN lv.verdict = 'refuted' THEN 'refuted'
    WHEN lv.verdict = 'conditions_changed' THEN 'conditions_changed'
    WHEN lv.verdict IN ('auth_failed', 'unreachable', 'error') THEN 'unverifiable'
    WHEN f.ended_at IS NOT NULL OR inval.fact_id IS NOT NULL THEN 'stale'
    WHEN julianday('now') - julianday(max(v.measured_at,
         CASE WHEN lv.verdict = 'confirmed' THEN lv.verified_at ELSE '' END)) > 90 THEN 'stale'
    WHEN julianday('now') - julianday(max(v.measured_at,
         CASE WHEN lv.verdict = 'confirmed' THEN lv.verified_at ELSE '' END)) > 30 THEN 'aging'
    ELSE 'fresh'
  END AS status,
  v.version, v.value, v.spread, v.unit, v.measured_at, v.tolerance
FROM fact f
JOIN fact_version v ON v.fact_id = f.id AND v.version = f.current_version
LEFT JOIN lv ON lv.fact_id = f.id
LEFT JOIN inval ON inval.fact_id = f.id;

SELECT id, status, value, spread, unit, measured_at FROM st ORDER BY id;

SELECT 'needs review', d.number, d.title, count(*) AS reasons
FROM decision d
JOIN decision_cite c ON c.decision = d.number
LEFT JOIN st ON st.id = c.fact_id
WHERE d.status IN ('proposed', 'accepted') AND (
  st.id IS NULL
  OR st.status IN ('refuted', 'superseded', 'stale', 'conditions_changed', 'unverifiable')
  OR (st.version <> c.fact_version
      AND EXISTS (SELECT 1 FROM fact_version p WHERE p.fact_id = c.fact_id AND p.version = c.fact_version)
      AND ((c.value <> 0 AND abs(st.value - c.value) > coalesce(nullif(st.tolerance, 0), 0.10) * abs(c.value))
           OR EXISTS (SELECT key, value FROM condition WHERE fact_id = c.fact_id AND version = c.fact_version
                        AND kind = 'identity'
                      EXCEPT SELECT key, value FROM condition WHERE fact_id = c.fact_id AND version = st.version
                        AND kind = 'identity')
           OR EXISTS (SELECT key, value FROM condition WHERE fact_id = c.fact_id AND version = st.version
                        AND kind = 'identity'
                      EXCEPT SELECT key, value FROM condition WHERE fact_id = c.fact_id AND version = c.fact_version
                        AND kind = 'identity')))
)
GROUP BY d.number, d.title
ORDER BY d.number;
