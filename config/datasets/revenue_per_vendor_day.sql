SELECT
  vendor_id,
  pickup_date,
  COUNT(*) AS trips,
  CAST(SUM(total_amount) AS DECIMAL(18, 2)) AS revenue
FROM trips
GROUP BY vendor_id, pickup_date
