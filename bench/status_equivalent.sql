-- What `factreg status` computes, as one SQLite query (registry-default thresholds 30d/90d): every current
-- fact with its status, last verification, condition-change staleness (a newer fact on the same machine
-- with another build/driver) and age.
-- Each current fact joins its last verification through the primary keys; superseded facts do not count as
-- the newest observation of a machine (as in factreg.registry.freshness.invalidations).
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
  v.value, v.spread, v.unit, v.measured_at
FROM fact f
JOIN fact_version v ON v.fact_id = f.id AND v.version = f.current_version
LEFT JOIN lv ON lv.fact_id = f.id
LEFT JOIN inval ON inval.fact_id = f.id
ORDER BY f.id;
