-- What `factreg status` computes, as one SQLite query (registry-default thresholds 30d/90d): every current
-- fact with its status, last verification, condition-change staleness (a newer fact on the same machine
-- with another build/driver) and age.
WITH cur AS MATERIALIZED (
  SELECT f.id, f.superseded_by, f.ended_at, v.version, v.value, v.spread, v.unit, v.measured_at
  FROM fact f JOIN fact_version v ON v.fact_id = f.id AND v.version = f.current_version
),
lv AS MATERIALIZED (
  SELECT fact_id, verdict, verified_at FROM verification
  WHERE pk IN (SELECT max(pk) FROM verification GROUP BY fact_id)
),
env AS MATERIALIZED (
  SELECT c.fact_id, m.value AS machine, c.key, c.value, cur.measured_at
  FROM condition c
  JOIN cur ON c.fact_id = cur.id AND c.version = cur.version
  JOIN condition m ON m.fact_id = c.fact_id AND m.version = c.version AND m.key = 'machine'
  WHERE c.kind = 'identity' AND c.key IN ('build_commit', 'build', 'gpu_driver', 'driver_version')
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
SELECT cur.id,
  CASE
    WHEN cur.superseded_by IS NOT NULL THEN 'superseded'
    WHEN lv.verdict = 'refuted' THEN 'refuted'
    WHEN lv.verdict = 'conditions_changed' THEN 'conditions_changed'
    WHEN lv.verdict IN ('auth_failed', 'unreachable', 'error') THEN 'unverifiable'
    WHEN cur.ended_at IS NOT NULL OR inval.fact_id IS NOT NULL THEN 'stale'
    WHEN julianday('now') - julianday(max(cur.measured_at,
         CASE WHEN lv.verdict = 'confirmed' THEN lv.verified_at ELSE '' END)) > 90 THEN 'stale'
    WHEN julianday('now') - julianday(max(cur.measured_at,
         CASE WHEN lv.verdict = 'confirmed' THEN lv.verified_at ELSE '' END)) > 30 THEN 'aging'
    ELSE 'fresh'
  END AS status,
  cur.value, cur.spread, cur.unit, cur.measured_at
FROM cur
LEFT JOIN lv ON lv.fact_id = cur.id
LEFT JOIN inval ON inval.fact_id = cur.id
ORDER BY cur.id;
