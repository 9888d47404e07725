"""Operations: monitoring (alarms, the dashboard, the alerts topic's watchers) and the post-deploy access."""
