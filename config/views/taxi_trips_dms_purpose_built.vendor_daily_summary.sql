-- Per vendor and day: trips, revenue and the average fare of a trip, for dashboards (QuickSight).
SELECT
  vendor_id,
  pickup_date,
  trips,
  revenue,
  CAST(revenue / trips AS DECIMAL(18, 2)) AS revenue_per_trip
FROM taxi_trips_dms_purpose_built.revenue_per_vendor_day
WHERE trips > 0
