SELECT
  pk_id,
  CAST(vendorid AS INT) AS vendor_id,
  tpep_pickup_datetime AS pickup_at,
  tpep_dropoff_datetime AS dropoff_at,
  to_date(tpep_pickup_datetime) AS pickup_date,
  CAST(passenger_count AS INT) AS passenger_count,
  trip_distance,
  CAST(payment_type AS INT) AS payment_type,
  CAST(fare_amount AS DECIMAL(10, 2)) AS fare_amount,
  CAST(tip_amount AS DECIMAL(10, 2)) AS tip_amount,
  CAST(total_amount AS DECIMAL(10, 2)) AS total_amount
FROM trips
WHERE tpep_pickup_datetime IS NOT NULL
  AND total_amount >= 0
