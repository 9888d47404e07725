-- Conformed trips for analysts who must not see tips: every column of trips_clean but tip_amount.
SELECT
  pk_id,
  vendor_id,
  pickup_at,
  dropoff_at,
  pickup_date,
  passenger_count,
  trip_distance,
  payment_type,
  fare_amount,
  total_amount
FROM taxi_trips_dms_conformed.trips_clean
